/**
 * The line format of evaluation results (`results.jsonl`), shared by `tabrl eval` (src/cli/results-writer.ts)
 * and the playground's export, so a file from either reads the same: one plain-JSON object per rollout,
 * snake_case like verifiers' outputs. It writes no files.
 */
import { toPlainData } from './plain-data.ts';
import type { RolloutRecord } from './evaluate.ts';

/** Options of a results line. */
export interface RecordLineOptions {
  /** State fields copied to the top level of the line (`tabrl eval --state-columns`), null when the state lacks them; named like the field. */
  stateColumns?: readonly string[];
}

/** The results line of one rollout: plain JSON, snake_case like verifiers' outputs. */
export function recordToJson(record: RolloutRecord, options: RecordLineOptions = {}): Record<string, unknown> {
  const { prompt: _prompt, completion: _completion, ...state } = record.state;
  const columns = Object.fromEntries((options.stateColumns ?? []).map((name) => [name, record.state[name] ?? null]));
  return {
    ...columns,
    task_index: record.taskIndex,
    rollout_index: record.rolloutIndex,
    prompt: record.prompt,
    completion: record.completion,
    answer: record.answer ?? null,
    task: record.task ?? null,
    info: record.info,
    reward: record.reward,
    scores: record.scores,
    // The rubric's weighted score of each model turn, when it scores turns (turn reward functions).
    ...(record.turnRewards ? { turn_rewards: record.turnRewards } : {}),
    passed: record.passed,
    errors: record.errors,
    stop_reason: record.stopReason,
    ...(record.stopCondition !== undefined ? { stop_condition: record.stopCondition } : {}),
    truncated: record.truncated,
    turns: record.turns.length,
    // Token data of each model turn, when the model ran in this process (local:).
    ...(record.turns.some((turn) => turn.tokens) ? { turn_tokens: record.turns.map((turn) => turn.tokens ?? null) } : {}),
    timings: record.timings,
    state,
  };
}

/** One results.jsonl line (with its newline) for `record`. */
export function recordToJsonLine(record: RolloutRecord, options: RecordLineOptions = {}): string {
  return `${JSON.stringify(toPlainData(recordToJson(record, options)))}\n`;
}

/** A whole results.jsonl for `records`, in the order given. */
export function recordsToJsonl(records: readonly RolloutRecord[], options: RecordLineOptions = {}): string {
  return records.map((record) => recordToJsonLine(record, options)).join('');
}
