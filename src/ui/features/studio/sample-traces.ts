/**
 * The sample trace log shipped with the app: the conversations of the support agent of Parcelo, a
 * fictional parcel-tracking API, with its tool calls (docs/examples/parcel-desk-traces.jsonl, made by
 * scripts/make-parcel-traces.mjs), so the Studio's simulated tools run offline on a log no model knows.
 */
import text from '../../../../docs/examples/parcel-desk-traces.jsonl?raw';

/** The sample trace log: its file name and JSONL text. */
export const SAMPLE_TRACES = { name: 'parcel-desk-traces.jsonl', text };
