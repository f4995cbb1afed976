/**
 * How faithful a tool simulator is to the real tool: recorded calls are split (seeded, per tool)
 * into a retrieval pool and a held-out part; each held-out call is simulated from the pool alone and
 * its result compared with the real one — exactly (same text, or the same JSON), field by field (the
 * share of JSON leaf paths, in either result, whose values agree), and, with a judge, judged
 * equivalent. `refineSimulator` runs rounds: after each, the pool calls the simulator gets most wrong
 * (each simulated from the rest of the pool, never from the held-out part) are added to its prompt
 * as corrections for the next round. A simulator that fails stops the measurement (SimulatorError);
 * a garbage reply counts as a wrong result and is counted per tool.
 */
import type { ChatClient } from '../client.ts';
import type { ToolSchema } from '../types.ts';
import { askJudge, parseYesNo, type JudgeTarget } from './judge-call.ts';
import type { ToolRecord } from './tool-records.ts';
import { canonicalJson } from './tool-retrieval.ts';
import { SimulatorError, ToolSimulator, hashText, type SimulatorCorrection } from './tool-simulator.ts';

/** Fidelity of one tool (or of all tools, `tool: "*"`) in one round; shares in 0–1. */
export interface FidelityRow {
  tool: string;
  /** Held-out calls measured. */
  calls: number;
  exact: number;
  fields: number;
  /** Share judged equivalent; null without a judge. */
  judged: number | null;
  /** Replies that were no usable result (empty, not JSON), counted as wrong. */
  garbage: number;
}

/** One simulated held-out call against the real result. */
export interface FidelityExample {
  tool: string;
  arguments: Record<string, unknown>;
  real: string;
  simulated: string;
  exact: boolean;
  fields: number;
  judged: boolean | null;
}

/** One round of `refineSimulator`. */
export interface FidelityRound {
  round: number;
  /** Corrections in the simulator's prompt this round. */
  corrections: number;
  rows: FidelityRow[];
  overall: FidelityRow;
  examples: FidelityExample[];
}

/** The records split for measuring: the pool the simulator retrieves from, and the held-out calls. */
export interface HeldOutSplit {
  pool: ToolRecord[];
  heldOut: ToolRecord[];
}

/** Splits records per tool by a seeded shuffle: `share` of each tool's calls held out (at least one when a tool has two or more, never all). */
export function splitHeldOut(records: readonly ToolRecord[], share: number, seed: number): HeldOutSplit {
  const held = new Set<ToolRecord>();
  const byTool = new Map<string, ToolRecord[]>();
  for (const record of records) byTool.set(record.tool, [...(byTool.get(record.tool) ?? []), record]);
  for (const [tool, list] of byTool) {
    if (list.length < 2 || share <= 0) continue;
    const count = Math.min(list.length - 1, Math.max(1, Math.round(list.length * share)));
    const order = list.map((record, i) => ({ record, key: hashText(`${seed}:${tool}:${i}`) })).sort((a, b) => a.key - b.key);
    for (const { record } of order.slice(0, count)) held.add(record);
  }
  return { pool: records.filter((record) => !held.has(record)), heldOut: records.filter((record) => held.has(record)) };
}

/** Whether two results are the same: equal text, or equal JSON (key order aside). */
export function resultsEqual(real: string, simulated: string): boolean {
  if (real.trim() === simulated.trim()) return true;
  const a = parseJson(real);
  const b = parseJson(simulated);
  return a.ok && b.ok && canonicalJson(a.value) === canonicalJson(b.value);
}

/** The share of JSON leaf paths (in either result) whose values agree; 1 or 0 by `resultsEqual` when either is not JSON. */
export function fieldAgreement(real: string, simulated: string): number {
  const a = parseJson(real);
  const b = parseJson(simulated);
  if (!a.ok || !b.ok) return resultsEqual(real, simulated) ? 1 : 0;
  const left = leaves(a.value);
  const right = leaves(b.value);
  const paths = new Set([...left.keys(), ...right.keys()]);
  if (paths.size === 0) return 1;
  let same = 0;
  for (const path of paths) if (left.has(path) && left.get(path) === right.get(path)) same += 1;
  return same / paths.size;
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** Leaf values by path (`a.b[2].c`), as canonical JSON; an empty object or array is a leaf. */
function leaves(value: unknown, path = '', out = new Map<string, string>()): Map<string, string> {
  const entries = Array.isArray(value)
    ? value.map((item, i) => [`[${i}]`, item] as const)
    : typeof value === 'object' && value !== null
      ? Object.entries(value).map(([key, item]) => [`.${key}`, item] as const)
      : [];
  if (entries.length === 0) out.set(path, canonicalJson(value));
  for (const [key, item] of entries) leaves(item, `${path}${key}`, out);
  return out;
}

/** The question a judge answers for one pair of results. */
export function equivalencePrompt(tool: string, args: Record<string, unknown>, real: string, simulated: string): string {
  return `Two results of the tool "${tool}" for the call ${JSON.stringify(args)}.

Real result:
${real}

Simulated result:
${simulated}

Do they state the same facts (the format may differ)? Give a one-line reason, then "Verdict: yes" or "Verdict: no".`;
}

/** What a measurement needs. */
export interface FidelityOptions {
  tools: readonly ToolSchema[];
  /** The simulator model (an endpoint, or `ScriptedSimulatorClient`). */
  client: ChatClient;
  model?: string;
  /** A judge for "judged equivalent"; without one that column is null. */
  judge?: JudgeTarget;
  examples?: number;
  seed?: number;
}

/** Simulates every held-out call from `pool` (with `corrections`) and compares; rows per tool in first-seen order, then the overall row. */
export async function measureFidelity(split: HeldOutSplit, corrections: readonly SimulatorCorrection[], options: FidelityOptions): Promise<Omit<FidelityRound, 'round'>> {
  const simulator = new ToolSimulator({
    tools: options.tools,
    records: split.pool,
    client: options.client,
    corrections,
    ...(options.model !== undefined ? { model: options.model } : {}),
    ...(options.examples !== undefined ? { examples: options.examples } : {}),
    seed: options.seed ?? 0,
  });
  const examples: (FidelityExample & { garbage: boolean })[] = [];
  for (const [i, record] of split.heldOut.entries()) {
    const { simulated, garbage } = await simulateOnce(simulator, record, `held-out-${i}`);
    const judged = options.judge && !garbage ? parseYesNo(await askJudge(options.judge, equivalencePrompt(record.tool, record.arguments, record.result, simulated))) : options.judge ? false : null;
    examples.push({
      tool: record.tool,
      arguments: record.arguments,
      real: record.result,
      simulated,
      exact: !garbage && resultsEqual(record.result, simulated),
      fields: garbage ? 0 : fieldAgreement(record.result, simulated),
      judged,
      garbage,
    });
  }
  const tools = [...new Set(split.heldOut.map((record) => record.tool))];
  return {
    corrections: corrections.length,
    rows: tools.map((tool) =>
      fidelityRow(
        tool,
        examples.filter((example) => example.tool === tool),
      ),
    ),
    overall: fidelityRow('*', examples),
    examples: examples.map(({ garbage: _garbage, ...example }) => example),
  };
}

/** One simulated call on a fresh backend; a garbage reply is returned as the error text, flagged. */
async function simulateOnce(simulator: ToolSimulator, record: ToolRecord, key: string): Promise<{ simulated: string; garbage: boolean }> {
  try {
    return { simulated: await simulator.simulate({ tool: record.tool, arguments: record.arguments }, { key, planted: [], calls: [] }), garbage: false };
  } catch (error) {
    if (error instanceof SimulatorError && error.kind === 'garbage') return { simulated: `(garbage: ${error.message})`, garbage: true };
    throw error;
  }
}

function fidelityRow(tool: string, examples: readonly (FidelityExample & { garbage: boolean })[]): FidelityRow {
  const n = examples.length;
  const share = (count: number) => (n === 0 ? 0 : count / n);
  const judged = examples.filter((example) => example.judged !== null);
  return {
    tool,
    calls: n,
    exact: share(examples.filter((example) => example.exact).length),
    fields: share(examples.reduce((sum, example) => sum + example.fields, 0)),
    judged: judged.length === 0 ? null : share(judged.filter((example) => example.judged).length),
    garbage: examples.filter((example) => example.garbage).length,
  };
}

/** Options of `refineSimulator`. */
export interface RefineOptions extends FidelityOptions {
  rounds: number;
  /** Pool calls added as corrections after each round (default 3). */
  worstPerRound?: number;
  /** Pool calls per tool re-simulated to find the worst (default 24). */
  probesPerTool?: number;
  /** Called after each round (to write the report as it grows). */
  onRound?: (round: FidelityRound, corrections: readonly SimulatorCorrection[]) => void;
}

/** Measures fidelity `rounds` times, adding the simulator's worst pool answers to its prompt after each round; returns the rounds and the final corrections. */
export async function refineSimulator(split: HeldOutSplit, options: RefineOptions): Promise<{ rounds: FidelityRound[]; corrections: SimulatorCorrection[] }> {
  const rounds: FidelityRound[] = [];
  const corrections: SimulatorCorrection[] = [];
  for (let round = 1; round <= options.rounds; round++) {
    const measured = { round, ...(await measureFidelity(split, corrections, options)) };
    rounds.push(measured);
    options.onRound?.(measured, corrections);
    if (round === options.rounds) break;
    corrections.push(...(await worstPoolAnswers(split.pool, corrections, options)));
  }
  return { rounds, corrections };
}

/** Each probed pool call simulated from the rest of the pool; the worst answers (fields < 1) not yet corrected. */
async function worstPoolAnswers(pool: readonly ToolRecord[], corrections: readonly SimulatorCorrection[], options: RefineOptions): Promise<SimulatorCorrection[]> {
  const corrected = new Set(corrections.map((correction) => `${correction.tool}${canonicalJson(correction.arguments)}`));
  const perTool = new Map<string, number>();
  const scored: { correction: SimulatorCorrection; fields: number }[] = [];
  for (const [i, record] of pool.entries()) {
    const key = `${record.tool}${canonicalJson(record.arguments)}`;
    const seen = perTool.get(record.tool) ?? 0;
    if (corrected.has(key) || seen >= (options.probesPerTool ?? 24)) continue;
    perTool.set(record.tool, seen + 1);
    const rest = pool.filter((other) => other !== record);
    const simulator = new ToolSimulator({
      tools: options.tools,
      records: rest,
      client: options.client,
      corrections,
      ...(options.model !== undefined ? { model: options.model } : {}),
      ...(options.examples !== undefined ? { examples: options.examples } : {}),
      seed: options.seed ?? 0,
    });
    const { simulated, garbage } = await simulateOnce(simulator, record, `probe-${i}`);
    const fields = garbage ? 0 : fieldAgreement(record.result, simulated);
    if (fields < 1) scored.push({ correction: { tool: record.tool, arguments: record.arguments, simulated, result: record.result }, fields });
  }
  const worst: SimulatorCorrection[] = [];
  for (const { correction } of scored.sort((a, b) => a.fields - b.fields)) {
    const key = `${correction.tool}${canonicalJson(correction.arguments)}`;
    if (corrected.has(key)) continue;
    corrected.add(key);
    worst.push(correction);
    if (worst.length >= (options.worstPerRound ?? 3)) break;
  }
  return worst;
}
