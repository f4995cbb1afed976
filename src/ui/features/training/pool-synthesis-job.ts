/**
 * Task synthesis during a GRPO job in the tab, wired: the job's pool (the environment's training
 * tasks at first, or the pool the unfinished job kept), rollouts of the task each step drew (by pool
 * version, so rollouts sampled ahead keep theirs), and the refresh the engine awaits after each step's
 * weight sync: the Studio's documents, the generator lent as the Studio lends roles, the policy being
 * trained solving each task k times in the job's sandbox. Each refresh lands in the run record (its
 * pool on the job, its metrics in `poolRefreshes`); a failed one leaves the pool as it was and says
 * why in the panel while training goes on.
 */
import type { ChatClient, RolloutRecord, SamplingArgs, Task } from '../../../envs/index.ts';
import { HeuristicStudioClient } from '../../../envs/studio/index.ts';
import type { AppRolloutSource } from '../../../workers/engine-bridge.ts';
import type { SandboxSession } from '../../../workers/sandbox-bridge.ts';
import { errorMessage } from '../../../common/error-message.ts';
import { usePlayground } from '../../store/index.ts';
import { buildJudge } from '../judge/judge-actions.ts';
import { persistRun } from './run-records.ts';
import { checkPoolSynthesis, refreshDue, refreshTabPool, type JobSynthesis, type PoolGeneratorSource, type TabPoolRefresh, type TabRefreshParts, type TabTaskPool } from './pool-synthesis.ts';
import type { RunJob } from './training-slice.ts';

const store = usePlayground;

/** The clients that write tasks for `source` and check them against their passage: the offline heuristic rules, or the Judge card's model (an endpoint, WebLLM or the in-tab model; it must be set). */
async function poolGenerator(source: PoolGeneratorSource): Promise<Pick<TabRefreshParts, 'generator' | 'verifier'>> {
  if (source === 'heuristic')
    return {
      generator: { client: new HeuristicStudioClient('generator'), model: 'heuristic-generator', label: 'the offline heuristic generator' },
      verifier: { client: new HeuristicStudioClient('solver'), model: 'heuristic-solver' },
    };
  if (source === 'judge') {
    const judge = await buildJudge();
    if (!judge) throw new Error("The generator is the Judge card's model, and the Judge card has none: choose an endpoint, WebLLM or the in-tab model there, or pick the offline heuristic generator.");
    return { generator: { client: judge.client, model: judge.model, label: judge.label }, verifier: judge };
  }
  throw new Error(`Unknown generator source "${String(source)}": choose the offline heuristic generator or the Judge card's model.`);
}

/** `k` attempts at each task, in `session` with the policy: records with the task's list index, at most `concurrency` in flight. */
export function sandboxMeasure(session: Pick<SandboxSession, 'rollout'>, model: string, sampling: SamplingArgs, concurrency: number, seed: number): TabRefreshParts['measure'] {
  return async (tasks: readonly Task[], k: number): Promise<RolloutRecord[]> => {
    const jobs = tasks.flatMap((task, taskIndex) => Array.from({ length: k }, (_, rolloutIndex) => ({ task, taskIndex, rolloutIndex })));
    const records: RolloutRecord[] = [];
    let next = 0;
    const worker = async () => {
      while (next < jobs.length) {
        const { task, taskIndex, rolloutIndex } = jobs[next++]!;
        // Distinct seeds, or the k attempts of a task would be one sample k times.
        const trajectory = await session.rollout(taskIndex, { ...sampling, seed: seed + taskIndex * k + rolloutIndex }, model, task);
        records.push({ ...trajectory, taskIndex, rolloutIndex });
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, jobs.length)) }, worker));
    return records;
  };
}

/** What the GRPO job hands the engine for synthesis: its rollouts by pool version, its task count, and the refresh after each step's sync. */
type SynthesisSource = Pick<AppRolloutSource, 'numTasks' | 'rollout' | 'onPolicySynced'>;

/**
 * The synthesis of GRPO job `job` (a new job's from the panel's choice, or the unfinished job's
 * own), over `session`: null when the job has none. The pool starts as the environment's training
 * tasks or as the job kept it; refreshes are numbered on the run's steps (`job.offset` on). `policy`
 * samples with the engine's current weights; `signal` is the job's Stop, which cancels a refresh in
 * flight without calling it a failure. Throws, before anything runs, when the settings or the
 * generator cannot work (a clear message for the panel).
 */
export async function startJobSynthesis(
  job: Extract<RunJob, { phase: 'grpo' }>,
  session: Pick<SandboxSession, 'rollout' | 'trainingTasks'>,
  policy: { client: ChatClient; model: string },
  signal?: AbortSignal,
): Promise<SynthesisSource | null> {
  const kept = job.synthesis;
  const chosen = kept?.settings ?? store.getState().poolSynthesis;
  if (!chosen) return null;
  const settings = checkPoolSynthesis(chosen);
  if (store.getState().studio.documents.length === 0)
    throw new Error('Task synthesis during training needs documents: add some in the Studio tab (Documents), or turn synthesis off in the GRPO settings.');
  const writers = await poolGenerator(settings.generator);
  let pool: TabTaskPool = kept?.pool ?? { tasks: await session.trainingTasks(), retired: [], refreshes: 0 };
  if (pool.tasks.length === 0) throw new Error('The environment has no training tasks to start the pool from.');
  saveSynthesis(job, { settings, pool });
  /** Every pool version of this job, the first at 0: a drawn task is looked up in the version it was drawn from. */
  const versions: Task[][] = [pool.tasks];
  const { settings: playground } = store.getState();
  const sampling: SamplingArgs = { max_tokens: job.options.maxTokens, temperature: job.options.temperature ?? playground.temperature };
  const modelName = policy.model;
  return {
    numTasks: pool.tasks.length,
    rollout: (taskIndex, samplingArgs, poolVersion = 0) => {
      const task = versions[poolVersion]?.[taskIndex];
      if (!task) return Promise.reject(new Error(`the task pool's version ${poolVersion} has no task ${taskIndex}`));
      return session.rollout(taskIndex, samplingArgs, modelName, task);
    },
    onPolicySynced: async (step, policyVersion) => {
      if (!refreshDue(step, settings)) return undefined;
      const runStep = job.offset + step;
      const outcome = await refreshTabPool(
        pool,
        settings,
        {
          documents: store.getState().studio.documents.map(({ name, text, paragraphs }) => ({ name, text, ...(paragraphs ? { paragraphs } : {}) })),
          ...writers,
          policy,
          measure: sandboxMeasure(session, modelName, sampling, playground.concurrency, playground.seed * 7919 + runStep * 1009),
          ...(signal ? { signal } : {}),
        },
        step,
        runStep,
        policyVersion,
      ).catch((error: unknown) => ({ ok: false as const, pool: { ...pool, error: errorMessage(error) }, error: errorMessage(error) }));
      // Stopped mid-refresh: the pool stays as it was, and a stop is no failure.
      if (signal?.aborted) return undefined;
      pool = outcome.pool;
      saveSynthesis(job, { settings, pool }, outcome.ok ? outcome.record : undefined);
      if (!outcome.ok) return undefined;
      versions.push(pool.tasks);
      return pool.tasks.length;
    },
  };
}

/** Keeps `synthesis` on the run's job (the one at `job.offset`) and adds `record` to the run's refreshes; the run is stored. */
function saveSynthesis(job: Extract<RunJob, { phase: 'grpo' }>, synthesis: JobSynthesis, record?: TabPoolRefresh): void {
  store.getState().setTrainingRun((run) => {
    if (!run) return run;
    const sameJob = run.lastJob?.phase === 'grpo' && run.lastJob.offset === job.offset;
    return {
      ...run,
      ...(sameJob ? { lastJob: { ...run.lastJob!, synthesis } as RunJob } : {}),
      ...(record ? { poolRefreshes: [...(run.poolRefreshes ?? []), record] } : {}),
    };
  });
  persistRun();
}
