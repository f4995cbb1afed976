/**
 * Evaluation: run an environment's tasks against a client, several rollouts per task, with bounded
 * concurrency, and summarise (reward mean/std, per-function means, pass rate and pass@k, errors,
 * truncations, timings). Records stream out through `onRecord` as rollouts finish, so a caller can
 * write them at once and an interrupted run keeps what it had. With group reward functions in the
 * rubric, a task's records are held until all its rollouts are in, scored as a group, then sent out.
 */
import type { ChatClient } from './client.ts';
import type { Environment } from './environment.ts';
import type { SamplingArgs, State, Task, Trajectory } from './types.ts';

/** One finished rollout of an evaluation. */
export interface RolloutRecord extends Trajectory {
  taskIndex: number;
  /** Which of the task's rollouts this is (0-based). */
  rolloutIndex: number;
  passed: boolean;
}

/** Progress of an evaluation, reported after each rollout. */
export interface EvaluateProgress {
  done: number;
  total: number;
  record: RolloutRecord;
}

/** Options of `evaluate`. */
export interface EvaluateOptions {
  /** How many tasks, from the start of the evaluation set (default: all). */
  numTasks?: number;
  /** Rollouts per task (default 1); pass@k is reported for k ≤ this. */
  rolloutsPerTask?: number;
  /** Rollouts in flight at once (default 8). */
  concurrency?: number;
  samplingArgs?: SamplingArgs;
  /** Model name sent with each request. */
  model?: string;
  /** The tasks to use instead of the environment's evaluation set. */
  tasks?: Task[];
  signal?: AbortSignal;
  onProgress?: (progress: EvaluateProgress) => void;
  /** Called with each record as it finishes (awaited, in completion order). */
  onRecord?: (record: RolloutRecord) => void | Promise<void>;
  /** Stop when a rollout hits an error that every rollout would hit (bad key, no server); default true. */
  stopOnFatalError?: boolean;
  /** Rollouts already done (an interrupted run's): they are not run again and count in the summary. */
  previous?: readonly RolloutRecord[];
  /** Stop after this many rollouts in a row (in finishing order) timed out, in the model call or in environment code; default: never. */
  maxConsecutiveTimeouts?: number;
}

/** Mean and standard deviation (population). */
export interface MeanStd {
  mean: number;
  std: number;
}

/** The summary of an evaluation. */
export interface EvaluationSummary {
  numTasks: number;
  rolloutsPerTask: number;
  numRollouts: number;
  reward: MeanStd;
  /** Mean of each reward function's score (a rollout where the function failed counts as 0). */
  scores: Record<string, number>;
  /** Rollouts where a reward function gave no score (it threw, e.g. a judge reply without a score), by function; absent when every rollout was scored. */
  unscored?: Record<string, number>;
  /** For each function in `unscored`: its mean over the rollouts it did score. */
  scoredMeans?: Record<string, number>;
  passRate: number;
  /** Unbiased pass@k (Chen et al. 2021) for k = 1, 2, 4, … ≤ rollouts per task. */
  passAtK: Record<string, number>;
  /** Rollouts with at least one error. */
  rolloutsWithErrors: number;
  errorsBySource: Record<string, number>;
  /** The first error message of each kind, keyed "source" or "source (kind)", e.g. "client (timeout)". */
  firstErrors: Record<string, string>;
  truncated: number;
  stopReasons: Record<string, number>;
  timings: { meanGenerationMs: number; meanScoringMs: number; meanRolloutMs: number };
}

/** What `evaluate` returns. */
export interface EvaluationResult {
  records: RolloutRecord[];
  summary: EvaluationSummary;
  /** Set when the run stopped early: the reason (a fatal client error, or cancellation). */
  stoppedEarly?: string;
  wallMs: number;
}

/** Runs `rolloutsPerTask` rollouts of each task against `client` and summarises them. */
export async function evaluate<S extends State>(env: Environment<S>, client: ChatClient, options: EvaluateOptions = {}): Promise<EvaluationResult> {
  const started = Date.now();
  const allTasks = options.tasks ?? env.evaluationTasks;
  const numTasks = Math.min(options.numTasks ?? allTasks.length, allTasks.length);
  const rolloutsPerTask = options.rolloutsPerTask ?? 1;
  const concurrency = Math.max(1, options.concurrency ?? 8);
  if (numTasks === 0) throw new Error(`${env.name}: there are no tasks to evaluate`);
  if (!Number.isInteger(rolloutsPerTask) || rolloutsPerTask < 1) throw new Error('evaluate: rolloutsPerTask must be a positive integer');

  const done = new Set((options.previous ?? []).map((record) => `${record.taskIndex}:${record.rolloutIndex}`));
  const jobs: { taskIndex: number; rolloutIndex: number }[] = [];
  for (let taskIndex = 0; taskIndex < numTasks; taskIndex++) {
    for (let rolloutIndex = 0; rolloutIndex < rolloutsPerTask; rolloutIndex++) {
      if (!done.has(`${taskIndex}:${rolloutIndex}`)) jobs.push({ taskIndex, rolloutIndex });
    }
  }

  const stop = new AbortController();
  const onOuterAbort = () => stop.abort();
  options.signal?.addEventListener('abort', onOuterAbort, { once: true });
  const records: RolloutRecord[] = [];
  const previous = (options.previous ?? []).filter((record) => record.taskIndex < numTasks && record.rolloutIndex < rolloutsPerTask);
  let stoppedEarly: string | undefined;
  let next = 0;
  let recordChain = Promise.resolve();
  let timeoutsInARow = 0;
  // Group rewards: each task's finished rollouts wait here until the group is whole.
  const grouped = env.rubric.hasGroupRewards;
  const waiting = new Map<number, RolloutRecord[]>();
  const emit = async (finished: RolloutRecord[]) => {
    for (const record of finished) {
      records.push(record);
      options.onProgress?.({ done: previous.length + records.length, total: previous.length + jobs.length, record });
      recordChain = recordChain.then(() => options.onRecord?.(record));
    }
    await recordChain;
  };

  const worker = async () => {
    while (next < jobs.length && !stop.signal.aborted) {
      const job = jobs[next++]!;
      const seed = options.samplingArgs?.seed;
      const samplingArgs = seed === undefined ? options.samplingArgs : { ...options.samplingArgs, seed: seed + job.taskIndex * rolloutsPerTask + job.rolloutIndex };
      const trajectory = await env.rollout(client, allTasks[job.taskIndex]!, samplingArgs, {
        model: options.model,
        signal: stop.signal,
        taskIndex: job.taskIndex,
      });
      if (trajectory.stopReason === 'aborted') continue;
      const record: RolloutRecord = { ...trajectory, taskIndex: job.taskIndex, rolloutIndex: job.rolloutIndex, passed: env.isPassed(trajectory) };
      const fatal = record.errors.find((error) => error.fatal);
      if (fatal && (options.stopOnFatalError ?? true)) {
        stoppedEarly ??= fatal.message;
        stop.abort();
      }
      const timeout = record.errors.find((error) => error.kind === 'timeout');
      timeoutsInARow = timeout ? timeoutsInARow + 1 : 0;
      if (timeout && options.maxConsecutiveTimeouts !== undefined && timeoutsInARow >= options.maxConsecutiveTimeouts && !stop.signal.aborted) {
        stoppedEarly ??= `${timeoutsInARow} rollouts in a row timed out; the last: ${timeout.message}`;
        stop.abort();
      }
      if (!grouped) {
        await emit([record]);
        continue;
      }
      const group = [...(waiting.get(job.taskIndex) ?? []), record];
      waiting.set(job.taskIndex, group);
      const before = previous.filter((r) => r.taskIndex === job.taskIndex);
      if (before.length + group.length < rolloutsPerTask) continue;
      waiting.delete(job.taskIndex);
      // The whole group in rollout order; only this run's records take the group scores (earlier ones have theirs).
      const whole = [...before, ...group].sort((a, b) => a.rolloutIndex - b.rolloutIndex);
      const scored = await env.scoreGroup(whole);
      await emit(scored.filter((_, i) => !before.includes(whole[i]!)).map((r) => ({ ...r, passed: env.isPassed(r) })));
    }
  };

  try {
    await Promise.all(Array.from({ length: Math.min(concurrency, jobs.length) }, worker));
  } finally {
    options.signal?.removeEventListener('abort', onOuterAbort);
  }
  if (!stoppedEarly && options.signal?.aborted) stoppedEarly = 'cancelled';

  const all = [...previous, ...records].sort((a, b) => a.taskIndex - b.taskIndex || a.rolloutIndex - b.rolloutIndex);
  return {
    records: all,
    summary: summarizeRollouts(
      all,
      rolloutsPerTask,
      [...env.rubric.rewards, ...env.rubric.groupRewards].map((reward) => reward.name),
    ),
    ...(stoppedEarly ? { stoppedEarly } : {}),
    wallMs: Date.now() - started,
  };
}

/** Summarises finished rollouts; `rewardNames` fixes the order of the per-function means. */
export function summarizeRollouts(records: readonly RolloutRecord[], rolloutsPerTask: number, rewardNames: readonly string[] = []): EvaluationSummary {
  const names = [...new Set([...rewardNames, ...records.flatMap((record) => Object.keys(record.scores))])];
  const scores = Object.fromEntries(names.map((name) => [name, mean(records.map((record) => record.scores[name] ?? 0))]));
  const byTask = new Map<number, RolloutRecord[]>();
  for (const record of records) byTask.set(record.taskIndex, [...(byTask.get(record.taskIndex) ?? []), record]);

  const passAtK: Record<string, number> = {};
  for (let k = 1; k <= rolloutsPerTask; k *= 2) {
    const perTask = [...byTask.values()].filter((group) => group.length >= k).map((group) => passAtKEstimate(group.length, group.filter((r) => r.passed).length, k));
    if (perTask.length > 0) passAtK[String(k)] = mean(perTask);
  }

  const firstErrors: Record<string, string> = {};
  for (const error of records.flatMap((record) => record.errors)) firstErrors[error.kind ? `${error.source} (${error.kind})` : error.source] ??= error.message;
  const count = (values: string[]) => values.reduce<Record<string, number>>((acc, value) => ({ ...acc, [value]: (acc[value] ?? 0) + 1 }), {});
  // A function that threw scored 0 in `scores`; say how often, and what it gave where it did score.
  const failedIn = (record: RolloutRecord, name: string) => record.errors.some((error) => error.source === 'reward' && error.name === name);
  const unscored = Object.fromEntries(names.map((name) => [name, records.filter((record) => failedIn(record, name)).length] as const).filter(([, n]) => n > 0));
  const scoredMeans = Object.fromEntries(Object.keys(unscored).map((name) => [name, mean(records.filter((record) => !failedIn(record, name)).map((record) => record.scores[name] ?? 0))]));
  return {
    numTasks: byTask.size,
    rolloutsPerTask,
    numRollouts: records.length,
    reward: meanStd(records.map((record) => record.reward)),
    scores,
    ...(Object.keys(unscored).length > 0 ? { unscored, scoredMeans } : {}),
    passRate: mean(records.map((record) => (record.passed ? 1 : 0))),
    passAtK,
    rolloutsWithErrors: records.filter((record) => record.errors.length > 0).length,
    errorsBySource: count(records.flatMap((record) => record.errors.map((error) => error.source))),
    firstErrors,
    truncated: records.filter((record) => record.truncated).length,
    stopReasons: count(records.map((record) => record.stopCondition ?? record.stopReason)),
    timings: {
      meanGenerationMs: mean(records.map((record) => record.timings.generationMs)),
      meanScoringMs: mean(records.map((record) => record.timings.scoringMs)),
      meanRolloutMs: mean(records.map((record) => record.timings.totalMs)),
    },
  };
}

/** Unbiased pass@k from n samples of which c passed: 1 − C(n−c, k) / C(n, k). */
export function passAtKEstimate(n: number, c: number, k: number): number {
  if (k > n) throw new Error(`pass@${k} needs at least ${k} samples, got ${n}`);
  if (n - c < k) return 1;
  let allFail = 1;
  for (let i = n - c + 1; i <= n; i++) allFail *= 1 - k / i;
  return 1 - allFail;
}

/** Mean and population standard deviation of a list (0 and 0 when empty). */
export function meanStd(values: readonly number[]): MeanStd {
  const m = mean(values);
  return { mean: m, std: values.length === 0 ? 0 : Math.sqrt(mean(values.map((value) => (value - m) ** 2))) };
}

function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;
}
