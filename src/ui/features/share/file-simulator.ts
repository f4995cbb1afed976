/**
 * The tool simulator an imported environment file's header names (the tab's download writes one; see
 * src/envs/studio/simulator-record.ts), as a choice the tab can make: the offline scripted simulator,
 * an endpoint by URL and model (never a key: files carry none), or only a label when the file was
 * simulated by a model a file cannot carry. Pure: the file's text in, a choice out.
 */
import { readSimulatorRecord } from '../../../envs/studio/index.ts';

/** The simulator an imported file names: its label, and the choice that lends the same in the tab (absent for WebLLM, the in-tab model, an offline judge). */
export interface FileSimulator {
  label: string;
  choice?: { kind: 'heuristic' } | { kind: 'endpoint'; baseURL: string; model: string };
}

/** The simulator header of an imported file, or undefined when it has none or a malformed one. */
export function fileSimulator(source: string): FileSimulator | undefined {
  const record = readSimulatorRecord(source);
  if (!record) return undefined;
  if (record.baseURL !== undefined && record.model !== undefined) return { label: record.label, choice: { kind: 'endpoint', baseURL: record.baseURL, model: record.model } };
  if (record.model === 'heuristic') return { label: record.label, choice: { kind: 'heuristic' } };
  return { label: record.label };
}
