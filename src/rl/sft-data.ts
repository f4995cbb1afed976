/**
 * SFT warm-up data made by the environment itself: run `evaluate` with any client (a teacher
 * endpoint, a WebLLM model, or a built-in environment's scripted expert) and keep the transcripts
 * of rollouts that pass (the environment's own verdict) or reach a given reward. Stored as JSONL in the OpenAI messages format
 * (`{"messages": [...]}` per line), the format TRL and verifiers read.
 */
import { evaluate, type ChatClient, type Environment, type EvaluateOptions, type Message } from '../envs/index.ts';
import { brokenRewardsReason, rubricRewardWeights } from '../envs/broken-rewards.ts';
import { errorMessage } from '../common/error-message.ts';

/** One SFT example: a chat transcript whose assistant messages are trained on. */
export interface SftExample {
  messages: Message[];
  /** The reward the transcript earned when it was made (for filtering and display). */
  reward?: number;
}

/** Options of `makeWarmupData`. */
export interface WarmupDataOptions extends Omit<EvaluateOptions, 'onRecord'> {
  /** Keep rollouts whose reward is at least this (default: the ones that pass, by the environment's `isPassed`). */
  minReward?: number;
  /** Which tasks to roll out (default `train`: the environment's demonstration tasks, which are its training set unless it sets them apart; `eval`: the held-out set). */
  split?: 'train' | 'eval';
}

/** What `makeWarmupData` returns: the kept examples and how many rollouts were tried. */
export interface WarmupData {
  examples: SftExample[];
  rollouts: number;
  meanReward: number;
  /** Why the rollouts' rewards measure nothing (every weighted reward function failed in every one: src/envs/broken-rewards.ts), if they do not. */
  brokenRewards?: string;
}

/** Rolls the environment out with `client` and keeps the transcripts that scored well. */
export async function makeWarmupData(env: Environment, client: ChatClient, options: WarmupDataOptions = {}): Promise<WarmupData> {
  const minReward = options.minReward;
  const tasks = options.tasks ?? (options.split === 'eval' ? env.evaluationTasks : env.demonstrationTasks);
  const result = await evaluate(env, client, { ...options, tasks });
  const examples = result.records
    .filter((record) => (minReward === undefined ? record.passed : record.reward >= minReward) && record.errors.every((error) => error.source === 'reward'))
    .map((record) => ({ messages: [...record.prompt, ...record.completion], reward: record.reward }));
  const brokenRewards = brokenRewardsReason(result.records, rubricRewardWeights(env.rubric));
  return { examples, rollouts: result.records.length, meanReward: result.summary.reward.mean, ...(brokenRewards ? { brokenRewards } : {}) };
}

/** Serialises examples as JSONL (one `{"messages": [...]}` object per line). */
export function examplesToJsonl(examples: readonly SftExample[]): string {
  return examples.map((example) => JSON.stringify(example)).join('\n') + (examples.length > 0 ? '\n' : '');
}

/** Parses JSONL of `{"messages": [...]}` lines; throws naming the line of the first bad one. */
export function parseSftJsonl(text: string, source = 'SFT data'): SftExample[] {
  const examples: SftExample[] = [];
  text.split('\n').forEach((line, index) => {
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new Error(`${source}, line ${index + 1}: not valid JSON (${errorMessage(error)})`);
    }
    const messages = (value as { messages?: unknown }).messages;
    if (!Array.isArray(messages) || messages.some((m) => typeof m !== 'object' || m === null || typeof (m as Message).role !== 'string' || typeof (m as Message).content !== 'string')) {
      throw new Error(`${source}, line ${index + 1}: expected {"messages": [{"role": ..., "content": ...}, ...]}`);
    }
    if (!messages.some((m) => (m as Message).role === 'assistant')) throw new Error(`${source}, line ${index + 1}: no assistant message to train on`);
    examples.push(value as SftExample);
  });
  return examples;
}
