/**
 * Task synthesis inside `tabrl train` (`--synth-docs DIR --generator-* --solver-* --keep LO-HI
 * --refresh-every N`): the flags, and the hook the training loop calls after each GRPO step, which
 * every N steps refreshes the environment's task pool with `refreshTaskPool` (src/envs/studio) using
 * the policy being trained, and records the refresh in metrics.jsonl (`phase: "pool-refresh"`).
 * Kept apart from train.ts so that file only parses, passes and calls.
 */
import { type ChatClient, type Environment, type Task } from '../envs/index.ts';
import { calibrationLabel, passRateHistogram, refreshTaskPool, type PoolRefreshMetrics, type StudioDocument } from '../envs/studio/index.ts';
import { parseKeep } from './calibrate.ts';
import { CliError } from './cli-error.ts';
import { integerFlag } from './flags.ts';
import { createRoleClient, roleOptions, roleSettingsFromFlags, roleUsage, type RoleSettings } from './model-roles.ts';
import { readDocuments } from './synth.ts';

/** The parseArgs options of the pool refresh. */
export const POOL_REFRESH_OPTIONS = {
  'synth-docs': { type: 'string' },
  ...roleOptions(['generator', 'solver']),
  keep: { type: 'string' },
  'refresh-every': { type: 'string' },
  'refresh-k': { type: 'string' },
} as const;

/** Usage lines of the pool refresh, for `tabrl train --help`. */
export const POOL_REFRESH_USAGE = `Task synthesis during training (rollouts sampled ahead keep the tasks they were drawn for; the pool is kept in the checkpoint, so --resume goes on from it):
  --synth-docs DIR       documents (.md, .txt, or folders of them) new tasks are made from, one document per refresh
${roleUsage(['generator', 'solver'], 25, {}, { local: true, heuristic: true })}
  --keep LO-HI           new tasks join the pool when the policy passes them this often (default 0.2-0.8);
                         pooled tasks it passes HI or more often retire
  --refresh-every N      refresh the pool every N GRPO steps (default 10)
  --refresh-k K          attempts of the policy per task at each refresh (default 4)`;

/** What a run records of its pool refresh. */
export interface PoolRefreshSettings {
  docs: string;
  generator: RoleSettings;
  solver: RoleSettings;
  keep: [number, number];
  every: number;
  k: number;
}

/** The refresh's settings from the flags, or undefined without --synth-docs; every mistake is a usage error. */
export function poolRefreshFromFlags(values: Record<string, unknown>): PoolRefreshSettings | undefined {
  const docs = values['synth-docs'];
  const related = ['keep', 'refresh-every', 'refresh-k', 'generator-model', 'generator-base-url', 'solver-model', 'solver-base-url'].filter((flag) => values[flag] !== undefined);
  if (typeof docs !== 'string') {
    if (related.length > 0) throw new CliError(`--${related[0]} belongs to task synthesis during training; give --synth-docs DIR too`, 2);
    return undefined;
  }
  readDocuments([docs]);
  return {
    docs,
    generator: roleSettingsFromFlags(values, 'generator', { required: true, purpose: '(the model that writes new tasks from --synth-docs)' })!,
    solver: roleSettingsFromFlags(values, 'solver', { required: true, purpose: '(the model that checks each new task against its document)' })!,
    keep: parseKeep(typeof values.keep === 'string' ? values.keep : '0.2-0.8'),
    every: integerFlag(values['refresh-every'] as string | undefined, '--refresh-every', 10, 1),
    k: integerFlag(values['refresh-k'] as string | undefined, '--refresh-k', 4, 1),
  };
}

/** The pool as a checkpoint keeps it: the training tasks after the last refresh, and how many refreshes ran (the next one takes the next document). */
export interface SavedTaskPool {
  tasks: Task[];
  refreshes: number;
}

/** The saved pool of a checkpoint, checked; a run saved before pools were kept (or a damaged one) is refused with what to do. */
export function checkSavedPool(pool: unknown, label: string): SavedTaskPool {
  const saved = pool as Partial<SavedTaskPool> | undefined;
  if (typeof saved !== 'object' || saved === null || !Array.isArray(saved.tasks) || saved.tasks.length === 0 || !Number.isInteger(saved.refreshes) || (saved.refreshes as number) < 0) {
    throw new CliError(`${label}: the checkpoint of this --synth-docs run holds no task pool (it was saved before pools were kept, or is damaged); start it again with --overwrite`, 2);
  }
  return { tasks: saved.tasks, refreshes: saved.refreshes as number };
}

/** The pool refresh of a run: `afterStep` refreshes `env.dataset` every `settings.every` GRPO steps (recorded with `record`, told with `say`); `refreshes` counts them, from `startRefresh` on a resumed run. */
export async function createPoolRefresher(
  env: Environment,
  settings: PoolRefreshSettings,
  io: { record: (line: Record<string, unknown>) => void; say: (text: string) => void },
  startRefresh = 0,
): Promise<{ afterStep: (step: number, policy: ChatClient) => Promise<void>; refreshes: () => number }> {
  const documents: StudioDocument[] = readDocuments([settings.docs]);
  const generator = await createRoleClient('generator', settings.generator);
  const solver = await createRoleClient('solver', settings.solver);
  let refresh = startRefresh;
  const afterStep = async (step: number, policy: ChatClient): Promise<void> => {
    if ((step + 1) % settings.every !== 0) return;
    let metrics: PoolRefreshMetrics;
    try {
      metrics = await refreshTaskPool(
        env,
        { documents, generator, generatorModel: settings.generator.model, solver, solverModel: settings.solver.model, policy, k: settings.k, keep: settings.keep },
        refresh,
        step,
      );
    } catch (error) {
      throw new Error(`the task-pool refresh after step ${step + 1} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    refresh += 1;
    const { addedQuestions: _added, retiredQuestions: _retired, ...line } = metrics;
    io.record({ phase: 'pool-refresh', ...line, histogram: histogramCounts([...metrics.poolPassRates, ...metrics.candidatePassRates]) });
    io.say(
      `   pool refresh ${metrics.refresh + 1} after step ${step + 1}: ${metrics.candidates} new candidates, ${metrics.added} added, ${metrics.retired} retired (mastered); pool ${metrics.poolBefore} → ${metrics.poolSize}`,
    );
    if (metrics.poolPassRates.length + metrics.candidatePassRates.length > 0)
      io.say(
        passRateHistogram(
          [...metrics.poolPassRates, ...metrics.candidatePassRates].map((passRate, taskIndex) => ({
            taskIndex,
            question: '',
            rollouts: settings.k,
            passRate,
            rewardMean: passRate,
            rewardStd: 0,
            learnability: 4 * passRate * (1 - passRate),
            label: calibrationLabel(passRate, settings.keep),
            errors: 0,
          })),
          { bins: 5, width: 20 },
        ).replace(/^/gm, '   '),
      );
  };
  return { afterStep, refreshes: () => refresh };
}

/** Tasks per pass-rate fifth [0, 0.2), …, [0.8, 1]. */
function histogramCounts(passRates: readonly number[]): number[] {
  const counts = [0, 0, 0, 0, 0];
  for (const rate of passRates) counts[Math.min(4, Math.floor(rate * 5))]! += 1;
  return counts;
}
