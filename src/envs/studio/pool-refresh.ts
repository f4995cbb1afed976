/**
 * Task synthesis inside training: keeping an environment's task pool in the learnable band while the
 * policy learns. One refresh: synthesize new candidates from the next documents' chunks (grounded and
 * verified as `synthesizeTasks` does), have the current policy solve each new candidate and each
 * pooled task `k` times with the environment's own rubric, add the candidates whose pass rate is in
 * the band `keep` (`calibrationLabel`: learnable), and retire the pooled tasks the policy has mastered
 * (pass rate ≥ the band's top; unless none would be left to train on). The pool is the environment's `dataset`, changed in place, so a
 * training loop that reads it each step trains on the refreshed pool. Each refresh returns its
 * metrics: pool size, tasks added and retired, and the pass rates measured (for a histogram).
 * This module runs no training step and touches no files; the training loop calls it every N steps.
 */
import type { ChatClient } from '../client.ts';
import type { Environment } from '../environment.ts';
import { evaluate } from '../evaluate.ts';
import type { SamplingArgs, Task } from '../types.ts';
import { calibrateRecords, type TaskCalibration } from './calibrate.ts';
import type { StudioDocument } from './chunking.ts';
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
  samplingArgs?: SamplingArgs;
  signal?: AbortSignal;
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
  /** Candidates left out as too easy or too hard for the policy now. */
  rejected: { tooEasy: number; tooHard: number };
  /** Pass rates measured this refresh: the pool's (before retiring) and the candidates'. */
  poolPassRates: number[];
  candidatePassRates: number[];
  /** The questions added and retired. */
  addedQuestions: string[];
  retiredQuestions: string[];
}

/** Refreshes `env.dataset` in place; see the module comment. Refresh `refresh` uses documents from `refresh × documentsPerRefresh` (wrapping around). */
export async function refreshTaskPool(env: Environment, options: PoolRefreshOptions, refresh: number, step: number): Promise<PoolRefreshMetrics> {
  const k = options.k ?? 4;
  const keep = options.keep ?? [0.2, 0.8];
  const perRefresh = Math.max(1, options.documentsPerRefresh ?? 1);
  if (options.documents.length === 0) throw new Error('refreshTaskPool: give at least one document');
  const documents = Array.from({ length: Math.min(perRefresh, options.documents.length) }, (_, i) => options.documents[(refresh * perRefresh + i) % options.documents.length]!);
  const known = new Set(env.dataset.map(questionOf));
  const { tasks } = await synthesizeTasks({
    documents,
    generator: options.generator,
    solver: options.solver,
    ...(options.generatorModel ? { generatorModel: options.generatorModel } : {}),
    ...(options.solverModel ? { solverModel: options.solverModel } : {}),
    k: 1,
    questionsPerChunk: options.questionsPerChunk ?? 3,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const candidates = keptTasks(tasks).filter((task) => !known.has(questionOf(task)));
  const poolBefore = env.dataset.length;
  const measure = async (list: readonly Task[]): Promise<TaskCalibration[]> => {
    if (list.length === 0) return [];
    const result = await evaluate(env, options.policy, {
      tasks: [...list],
      rolloutsPerTask: k,
      ...(options.policyModel ? { model: options.policyModel } : {}),
      ...(options.samplingArgs ? { samplingArgs: options.samplingArgs } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (result.stoppedEarly) throw new Error(`the pool refresh stopped: ${result.stoppedEarly}`);
    return calibrateRecords(result.records, list, keep);
  };
  const pool = await measure(env.dataset);
  const fresh = await measure(candidates);
  const added = fresh.filter((task) => task.label === 'learnable').map((task) => candidates[task.taskIndex]!);
  // Mastered tasks retire, unless that would leave nothing to train on.
  const mastered = pool.filter((task) => task.label === 'too-easy').map((task) => task.taskIndex);
  const retiredIndices = new Set(mastered.length === poolBefore && added.length === 0 ? [] : mastered);
  const retiredQuestions = env.dataset.filter((_, i) => retiredIndices.has(i)).map(questionOf);
  // In place: the training loop reads env.dataset each step.
  const remaining = env.dataset.filter((_, i) => !retiredIndices.has(i));
  env.dataset.splice(0, env.dataset.length, ...remaining, ...added);
  return {
    refresh,
    step,
    poolBefore,
    poolSize: env.dataset.length,
    candidates: candidates.length,
    added: added.length,
    retired: retiredIndices.size,
    rejected: { tooEasy: fresh.filter((task) => task.label === 'too-easy').length, tooHard: fresh.filter((task) => task.label === 'too-hard').length },
    poolPassRates: pool.map((task) => task.passRate),
    candidatePassRates: fresh.map((task) => task.passRate),
    addedQuestions: added.map(questionOf),
    retiredQuestions,
  };
}

function questionOf(task: Task): string {
  return (task.question ?? [...(task.prompt ?? [])].reverse().find((message) => message.role === 'user')?.content ?? '').trim();
}
