/**
 * Task synthesis inside training: keeping an environment's task pool in the learnable band while the
 * policy learns. One refresh: synthesize new candidates from the next documents' chunks (grounded and
 * verified as `synthesizeTasks` does), have the current policy solve each new candidate and each
 * pooled task `k` times with the environment's own rubric (and the first `replay` retired tasks, oldest
 * first), add the candidates whose pass rate is in the band `keep` (`calibrationLabel`: learnable),
 * bring back the replayed tasks the policy no longer masters (pass rate under the band's top: it has
 * forgotten them), and retire pooled tasks it has mastered (pass rate ≥ the band's top) as far as the
 * pool's rules allow (pool-rules.ts: a minimum size, and by default no more than join). The pool is
 * the environment's `dataset`, and the retired tasks a list the caller keeps, both changed in place,
 * so a training loop that reads the dataset each step trains on the refreshed pool. Each refresh
 * returns its metrics: pool size, tasks added, retired, replayed and rejoined, and the pass rates
 * measured (for a histogram). The policy must sample with the weights being trained as they are now
 * (call it after the trainer's weight sync, not between an update and its sync).
 * Where the environment's code runs elsewhere (the tab's sandbox), the pool is a plain task list and
 * the caller measures with `measure` (the rollout records of each task solved k times, by list index).
 * This module runs no training step and touches no files; the training loop calls it every N steps.
 */
import type { ChatClient } from '../client.ts';
import type { Environment } from '../environment.ts';
import { evaluate, type RolloutRecord } from '../evaluate.ts';
import type { SamplingArgs, Task } from '../types.ts';
import { calibrateRecords, type TaskCalibration } from './calibrate.ts';
import type { StudioDocument } from './chunking.ts';
import { checkPoolRules, DEFAULT_POOL_RULES, pickRetiring, retireCount, type PoolRules } from './pool-rules.ts';
import { synthesizeTasks } from './synthesize.ts';
import { keptTasks } from './task-files.ts';

/** What one refresh needs. */
export interface PoolRefreshOptions {
  /** The documents new tasks come from; each refresh takes the next `documentsPerRefresh` of them, in turn. */
  documents: readonly StudioDocument[];
  generator: ChatClient;
  generatorModel?: string;
  /** The solver that verifies candidates with their passage (synthesis's open-book check). */
  solver: ChatClient;
  solverModel?: string;
  /** The policy being trained, which solves candidates and pooled tasks. */
  policy: ChatClient;
  policyModel?: string;
  /** Attempts per task (default 4). */
  k?: number;
  /** The learnable band of pass rates (default [0.2, 0.8]). */
  keep?: readonly [number, number];
  /** Documents per refresh (default 1). */
  documentsPerRefresh?: number;
  /** Questions asked per chunk (default 3). */
  questionsPerChunk?: number;
  /** The pool's minimum size, retire limit and replay (defaults: `DEFAULT_POOL_RULES`). */
  rules?: Partial<PoolRules>;
  samplingArgs?: SamplingArgs;
  signal?: AbortSignal;
  /** How the policy solves tasks when the environment runs elsewhere: `k` records per task of `tasks`, each with its list index as `taskIndex`; absent: `evaluate` in this process. */
  measure?: (tasks: readonly Task[], k: number) => Promise<RolloutRecord[]>;
}

/** A task pool without its environment: the training tasks alone (the tab's, whose environment runs in a sandbox). */
export interface TaskPool {
  dataset: Task[];
}

/** The metrics of one refresh. */
export interface PoolRefreshMetrics {
  /** 0 for the first refresh. */
  refresh: number;
  /** The training step it ran after. */
  step: number;
  poolBefore: number;
  poolSize: number;
  /** New candidates that synthesis kept (grounded) and the policy then solved. */
  candidates: number;
  added: number;
  retired: number;
  /** Retired tasks re-measured this refresh, and how many of them rejoined the pool (no longer mastered). */
  replayed: number;
  rejoined: number;
  /** Tasks retired and not back in the pool after this refresh. */
  retiredTotal: number;
  /** How synthesis went: candidates the generator wrote, those that were not tasks (malformed), those lost to failed calls (and the first failure), and why it stopped early (a dead generator or solver), if it did. */
  synthesis: { chunks: number; generated: number; malformed: number; errors: number; firstError?: string; stoppedEarly?: string };
  /** Candidates left out as too easy or too hard for the policy now. */
  rejected: { tooEasy: number; tooHard: number };
  /** Pass rates measured this refresh: the pool's (before retiring), the candidates' and the replayed tasks'. */
  poolPassRates: number[];
  candidatePassRates: number[];
  replayPassRates: number[];
  /** The questions added, retired and rejoined. */
  addedQuestions: string[];
  retiredQuestions: string[];
  rejoinedQuestions: string[];
}

/**
 * Refreshes `env.dataset` and `retired` (the retired tasks, oldest first, which the caller keeps
 * between refreshes) in place; see the module comment. Refresh `refresh` uses documents from
 * `refresh × documentsPerRefresh` (wrapping around).
 */
export async function refreshTaskPool(env: Environment | TaskPool, options: PoolRefreshOptions, refresh: number, step: number, retired: Task[] = []): Promise<PoolRefreshMetrics> {
  const k = options.k ?? 4;
  const keep = options.keep ?? [0.2, 0.8];
  const rules = checkPoolRules({ ...DEFAULT_POOL_RULES, ...options.rules });
  const perRefresh = Math.max(1, options.documentsPerRefresh ?? 1);
  if (options.documents.length === 0) throw new Error('refreshTaskPool: give at least one document');
  const documents = Array.from({ length: Math.min(perRefresh, options.documents.length) }, (_, i) => options.documents[(refresh * perRefresh + i) % options.documents.length]!);
  // A retired task is not new: it comes back by replay, not as a candidate.
  const known = new Set([...env.dataset, ...retired].map(questionOf));
  const { tasks, report } = await synthesizeTasks({
    documents,
    generator: options.generator,
    solver: options.solver,
    ...(options.generatorModel ? { generatorModel: options.generatorModel } : {}),
    ...(options.solverModel ? { solverModel: options.solverModel } : {}),
    k: 1,
    questionsPerChunk: options.questionsPerChunk ?? 3,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const firstError = tasks.find((task) => task.rejection === 'error')?.reason;
  const candidates = keptTasks(tasks).filter((task) => !known.has(questionOf(task)));
  const poolBefore = env.dataset.length;
  const replays = retired.slice(0, rules.replay);
  // One evaluation over the pool, the candidates and the replays: [pool | candidates | replays].
  const everything = [...env.dataset, ...candidates, ...replays];
  const measured = await measure(env, options, everything, k, keep);
  const part = (from: number, to: number) => measured.filter((task) => task.taskIndex >= from && task.taskIndex < to).map((task) => ({ ...task, taskIndex: task.taskIndex - from }));
  const pool = part(0, poolBefore);
  const fresh = part(poolBefore, poolBefore + candidates.length);
  const replayed = part(poolBefore + candidates.length, everything.length);
  const added = fresh.filter((task) => task.label === 'learnable').map((task) => candidates[task.taskIndex]!);
  // Forgotten: a replayed task the policy no longer masters (in the band, or under it) trains again.
  const rejoinedIndices = new Set(replayed.filter((task) => task.label !== 'too-easy').map((task) => task.taskIndex));
  const rejoined = replays.filter((_, i) => rejoinedIndices.has(i));
  const mastered = pool.filter((task) => task.label === 'too-easy');
  const retiredIndices = new Set(pickRetiring(mastered, retireCount(mastered.length, poolBefore, added.length + rejoined.length, rules)));
  const retiring = env.dataset.filter((_, i) => retiredIndices.has(i));
  // In place: the training loop reads env.dataset each step. Replayed tasks still mastered go to the back of the queue.
  const remaining = env.dataset.filter((_, i) => !retiredIndices.has(i));
  env.dataset.splice(0, env.dataset.length, ...remaining, ...added, ...rejoined);
  retired.splice(0, replays.length);
  retired.push(...replays.filter((_, i) => !rejoinedIndices.has(i)), ...retiring);
  return {
    refresh,
    step,
    poolBefore,
    poolSize: env.dataset.length,
    candidates: candidates.length,
    added: added.length,
    retired: retiring.length,
    replayed: replays.length,
    rejoined: rejoined.length,
    retiredTotal: retired.length,
    synthesis: {
      chunks: report.chunks,
      generated: report.candidates,
      malformed: report.rejections.malformed,
      errors: report.rejections.error,
      ...(firstError ? { firstError } : {}),
      ...(report.stoppedEarly ? { stoppedEarly: report.stoppedEarly } : {}),
    },
    rejected: { tooEasy: fresh.filter((task) => task.label === 'too-easy').length, tooHard: fresh.filter((task) => task.label === 'too-hard').length },
    poolPassRates: pool.map((task) => task.passRate),
    candidatePassRates: fresh.map((task) => task.passRate),
    replayPassRates: replayed.map((task) => task.passRate),
    addedQuestions: added.map(questionOf),
    retiredQuestions: retiring.map(questionOf),
    rejoinedQuestions: rejoined.map(questionOf),
  };
}

/** Each task of `list` solved `k` times by the policy, calibrated against the band `keep` (tasks in list order). */
async function measure(env: Environment | TaskPool, options: PoolRefreshOptions, list: readonly Task[], k: number, keep: readonly [number, number]): Promise<TaskCalibration[]> {
  if (list.length === 0) return [];
  if (options.measure) return calibrateRecords(await options.measure(list, k), list, keep);
  if (!('rollout' in env)) throw new Error('refreshTaskPool: a task pool without its environment needs options.measure');
  const result = await evaluate(env, options.policy, {
    tasks: [...list],
    rolloutsPerTask: k,
    ...(options.policyModel ? { model: options.policyModel } : {}),
    ...(options.samplingArgs ? { samplingArgs: options.samplingArgs } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (result.stoppedEarly) throw new Error(`the pool refresh stopped: ${result.stoppedEarly}`);
  return calibrateRecords(result.records, list, keep);
}

function questionOf(task: Task): string {
  return (task.question ?? [...(task.prompt ?? [])].reverse().find((message) => message.role === 'user')?.content ?? '').trim();
}

/** Tasks per pass-rate fifth [0, 0.2), …, [0.8, 1]: the histogram a refresh records. */
export function passRateCounts(passRates: readonly number[]): number[] {
  const counts = [0, 0, 0, 0, 0];
  for (const rate of passRates) counts[Math.min(4, Math.floor(rate * 5))]! += 1;
  return counts;
}

/** Every pass rate a refresh measured: the pool's, the candidates' and the replayed tasks'. */
export function measuredPassRates(metrics: Pick<PoolRefreshMetrics, 'poolPassRates' | 'candidatePassRates' | 'replayPassRates'>): number[] {
  return [...metrics.poolPassRates, ...metrics.candidatePassRates, ...metrics.replayPassRates];
}

/** What a run records of one refresh (metrics.jsonl's `phase: "pool-refresh"` line, the tab's run record): the metrics without the question lists, with the histogram of `passRateCounts`. */
export type PoolRefreshRecord = Omit<PoolRefreshMetrics, 'addedQuestions' | 'retiredQuestions' | 'rejoinedQuestions'> & { histogram: number[]; policyVersion?: number };

/** The record of one refresh; `policyVersion` is the weights version it measured, when the policy counts them. */
export function poolRefreshRecord(metrics: PoolRefreshMetrics, policyVersion?: number): PoolRefreshRecord {
  const { addedQuestions: _added, retiredQuestions: _retired, rejoinedQuestions: _rejoined, ...line } = metrics;
  return { ...line, histogram: passRateCounts(measuredPassRates(metrics)), ...(policyVersion !== undefined ? { policyVersion } : {}) };
}
