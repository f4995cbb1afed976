/**
 * Which tool simulator an environment file expects, written into the file as a comment when the tab
 * downloads it, and read back by `tabrl`: the first line holds the record as JSON
 * (`// tabrl-simulator: {"label": ..., "baseURL": ..., "model": ...}`), the next says in words how
 * to lend the same simulator from a terminal (`--simulator-base-url`, `--simulator-model`). A record
 * names an endpoint's URL and model, `heuristic` for the offline scripted simulator, or only a label
 * when the tab's simulator is a model `tabrl` cannot lend (WebLLM, the in-tab model). Never a key:
 * keys stay in the browser that stored them. Pure text in, text out; nothing here calls a model.
 */

/** The simulator an environment file expects: what the tab lent (its label), and the `--simulator-*` values that lend the same from `tabrl`, when it can. */
export interface SimulatorRecord {
  /** What the tab lent, in words ("endpoint qwen at http://...", "the scripted simulator ..."). */
  label: string;
  /** The endpoint's base URL (`--simulator-base-url`); absent for the heuristic and for models tabrl cannot lend. */
  baseURL?: string;
  /** `--simulator-model`: the endpoint's model name, or `heuristic`; absent when tabrl cannot lend the same model. */
  model?: string;
}

const MARK = '// tabrl-simulator:';

/** The `tabrl` flags that lend the recorded simulator, or undefined when `tabrl` cannot lend that model. */
export function simulatorFlags(record: SimulatorRecord): string | undefined {
  if (record.model === undefined) return undefined;
  if (record.baseURL === undefined) return `--simulator-model ${shellWord(record.model)}`;
  return `--simulator-base-url ${shellWord(record.baseURL)} --simulator-model ${shellWord(record.model)}`;
}

/** A value as one shell word: as it is when it holds only safe characters, else single-quoted (a file's text may be pasted into a terminal). */
function shellWord(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/** The header lines for `record` (the record as JSON, then how to lend it from a terminal), each starting with the mark. */
export function simulatorHeader(record: SimulatorRecord): string {
  const flags = simulatorFlags(record);
  const how = flags
    ? `from a terminal, lend the same: tabrl eval|train FILE ${flags}${record.baseURL !== undefined ? ' --simulator-api-key-env VAR (the key is not in this file)' : ''}`
    : 'tabrl cannot lend that model: give --simulator-base-url URL --simulator-model NAME for an endpoint, or --simulator-model heuristic';
  const json = JSON.stringify({ label: record.label, ...(record.baseURL !== undefined ? { baseURL: record.baseURL } : {}), ...(record.model !== undefined ? { model: record.model } : {}) });
  return `${MARK} ${json}\n${MARK} the tools were simulated in the tab by ${oneLine(record.label)}; ${how}\n`;
}

/** `source` with its simulator header (if any) replaced by one for `record`, so a file downloaded twice carries one header. */
export function withSimulatorHeader(source: string, record: SimulatorRecord): string {
  return simulatorHeader(record) + withoutSimulatorHeader(source);
}

/** `source` without the simulator header lines at its top. */
export function withoutSimulatorHeader(source: string): string {
  const lines = source.split('\n');
  let first = 0;
  while (first < lines.length && lines[first]!.startsWith(MARK)) first++;
  return lines.slice(first).join('\n');
}

/** The simulator record at the top of `source`, or undefined when it has none or it is malformed (a file is untrusted text). */
export function readSimulatorRecord(source: string): SimulatorRecord | undefined {
  const firstLine = source.slice(0, source.indexOf('\n') < 0 ? source.length : source.indexOf('\n'));
  if (!firstLine.startsWith(MARK)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(firstLine.slice(MARK.length));
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { label, baseURL, model } = value as Record<string, unknown>;
  if (typeof label !== 'string' || (baseURL !== undefined && typeof baseURL !== 'string') || (model !== undefined && typeof model !== 'string')) return undefined;
  if (baseURL !== undefined && model === undefined) return undefined;
  return { label: oneLine(label), ...(baseURL !== undefined ? { baseURL: oneLine(baseURL) } : {}), ...(model !== undefined ? { model: oneLine(model) } : {}) };
}

/** The text on one line (a label or URL cannot break the comment it sits in). */
function oneLine(text: string): string {
  return text.replace(/[\r\n\u2028\u2029]+/g, ' ');
}
