/**
 * The line format of evaluation results (`results.jsonl`), shared by `tabrl eval` (src/cli/results-writer.ts)
 * and the playground's export, so a file from either reads the same: one plain-JSON object per rollout,
 * snake_case like verifiers' outputs. It writes no files.
 */
import { toPlainData } from './plain-data.ts';
import type { RolloutRecord } from './evaluate.ts';

/** The results line of one rollout: plain JSON, snake_case like verifiers' outputs. */
export function recordToJson(record: RolloutRecord): Record<string, unknown> {
  const { prompt: _prompt, completion: _completion, ...state } = record.state;
  return {
    task_index: record.taskIndex,
    rollout_index: record.rolloutIndex,
    prompt: record.prompt,
    completion: record.completion,
    answer: record.answer ?? null,
    task: record.task ?? null,
    info: record.info,
    reward: record.reward,
    scores: record.scores,
    passed: record.passed,
    errors: record.errors,
    stop_reason: record.stopReason,
    truncated: record.truncated,
    turns: record.turns.length,
    // Token data of each model turn, when the model ran in this process (local:).
    ...(record.turns.some((turn) => turn.tokens) ? { turn_tokens: record.turns.map((turn) => turn.tokens ?? null) } : {}),
    timings: record.timings,
    state,
  };
}

/** One results.jsonl line (with its newline) for `record`. */
export function recordToJsonLine(record: RolloutRecord): string {
  return `${JSON.stringify(toPlainData(recordToJson(record)))}\n`;
}

/** A whole results.jsonl for `records`, in the order given. */
export function recordsToJsonl(records: readonly RolloutRecord[]): string {
  return records.map(recordToJsonLine).join('');
}
