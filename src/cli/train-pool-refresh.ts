/**
 * Task synthesis inside `tabrl train` (`--synth-docs DIR --generator-* --solver-* --keep LO-HI
 * --refresh-every N --min-pool N --max-retire joined|all|N --replay N`): the flags, and the hook the
 * training loop calls after each GRPO step once the policy samples with that step's weights, which
 * every N steps refreshes the environment's task pool with `refreshTaskPool` (src/envs/studio) using
 * the policy being trained, and records the refresh in metrics.jsonl (`phase: "pool-refresh"`).
 * Kept apart from train.ts so that file only parses, passes and calls.
 */
import { type ChatClient, type Environment, type Task } from '../envs/index.ts';
import {
  calibrationLabel,
  checkPoolRules,
  DEFAULT_POOL_RULES,
  measuredPassRates,
  passRateHistogram,
  poolRefreshRecord,
  refreshTaskPool,
  type PoolRefreshMetrics,
  type PoolRules,
  type StudioDocument,
} from '../envs/studio/index.ts';
import type { TrainingRunHooks } from '../rl/training-run.ts';
import { errorMessage } from '../common/error-message.ts';
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
  'min-pool': { type: 'string' },
  'max-retire': { type: 'string' },
  replay: { type: 'string' },
} as const;

/** Usage lines of the pool refresh, for `tabrl train --help`. */
export const POOL_REFRESH_USAGE = `Task synthesis during training (rollouts sampled ahead keep the tasks they were drawn for; the pool is kept in the checkpoint, so --resume goes on from it):
  --synth-docs DIR       documents (.md, .txt, or folders of them) new tasks are made from, one document per refresh
${roleUsage(['generator', 'solver'], 25, {}, { local: true, heuristic: true })}
  --keep LO-HI           new tasks join the pool when the policy passes them this often (default 0.2-0.8);
                         pooled tasks it passes HI or more often (mastered) may retire
  --refresh-every N      refresh the pool every N GRPO steps (default 10)
  --refresh-k K          attempts of the policy per task at each refresh (default 4)
  --min-pool N           never retire below N tasks (default ${DEFAULT_POOL_RULES.minPool})
  --max-retire M         mastered tasks retired per refresh: joined (no more than join it, new and replayed:
                         the pool never shrinks), all, or a number (default ${String(DEFAULT_POOL_RULES.maxRetire)})
  --replay N             retired tasks re-measured per refresh, oldest first; those the policy no longer
                         masters (forgotten) rejoin the pool (default ${DEFAULT_POOL_RULES.replay}; 0: never)`;

/** What a run records of its pool refresh. */
export interface PoolRefreshSettings {
  docs: string;
  generator: RoleSettings;
  solver: RoleSettings;
  keep: [number, number];
  every: number;
  k: number;
  /** The retire rule; absent in runs saved before it existed, which retired every mastered task (`OLD_POOL_RULES`). */
  rules?: PoolRules;
}

/** The rule for runs saved before --min-pool, --max-retire and --replay: every mastered task retires but one task stays (the old rule kept the whole pool when all were mastered and none joined), none replayed. */
const OLD_POOL_RULES: PoolRules = { minPool: 1, maxRetire: 'all', replay: 0 };

/** The refresh's settings from the flags, or undefined without --synth-docs; every mistake is a usage error. */
export function poolRefreshFromFlags(values: Record<string, unknown>): PoolRefreshSettings | undefined {
  const docs = values['synth-docs'];
  const related = ['keep', 'refresh-every', 'refresh-k', 'min-pool', 'max-retire', 'replay', 'generator-model', 'generator-base-url', 'solver-model', 'solver-base-url'].filter(
    (flag) => values[flag] !== undefined,
  );
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
    rules: {
      minPool: integerFlag(values['min-pool'] as string | undefined, '--min-pool', DEFAULT_POOL_RULES.minPool, 1),
      maxRetire: retireLimitFlag(values['max-retire'] as string | undefined),
      replay: integerFlag(values.replay as string | undefined, '--replay', DEFAULT_POOL_RULES.replay, 0),
    },
  };
}

function retireLimitFlag(text: string | undefined): PoolRules['maxRetire'] {
  if (text === undefined) return DEFAULT_POOL_RULES.maxRetire;
  if (text === 'joined' || text === 'all') return text;
  const value = Number(text);
  if (text.trim() === '' || !Number.isSafeInteger(value) || value < 0) throw new CliError(`--max-retire must be joined, all or a whole number ≥ 0, got "${text}"`, 2);
  return value;
}

/** The pool as a checkpoint keeps it: the training tasks after the last refresh, how many refreshes ran (the next one takes the next document), and the retired tasks waiting for replay. */
export interface SavedTaskPool {
  tasks: Task[];
  refreshes: number;
  /** Oldest first; absent in checkpoints saved before replay existed (none then). */
  retired?: Task[];
}

/** The saved pool of a checkpoint, checked; a run saved before pools were kept (or a damaged one) is refused with what to do. */
export function checkSavedPool(pool: unknown, label: string): SavedTaskPool {
  const saved = pool as Partial<SavedTaskPool> | undefined;
  if (
    typeof saved !== 'object' ||
    saved === null ||
    !Array.isArray(saved.tasks) ||
    saved.tasks.length === 0 ||
    !Number.isInteger(saved.refreshes) ||
    (saved.refreshes as number) < 0 ||
    (saved.retired !== undefined && !Array.isArray(saved.retired))
  ) {
    throw new CliError(`${label}: the checkpoint of this --synth-docs run holds no task pool (it was saved before pools were kept, or is damaged); start it again with --overwrite`, 2);
  }
  return { tasks: saved.tasks, refreshes: saved.refreshes as number, retired: saved.retired ?? [] };
}

/** The pool refresh of a run, as createPoolRefresher makes it. */
interface PoolRefresher {
  /** Refreshes the pool when step `step` is due one, measuring `policy`, which must sample with the weights that step produced. */
  afterStep: (step: number, policy: ChatClient) => Promise<void>;
  /** The training hook that runs afterStep once the policy has the step's weights (onGrpoStep comes before the sync, one update old). */
  hooks: Required<Pick<TrainingRunHooks, 'onGrpoPolicySynced'>>;
  /** Refreshes run so far, the earlier run's included. */
  refreshes: () => number;
  /** The retired tasks waiting for replay, oldest first (kept in the checkpoint). */
  retired: Task[];
}

/**
 * The pool refresh of a run: `afterStep` refreshes `env.dataset` every `settings.every` GRPO steps
 * (recorded with `record`, told with `say`); `refreshes` counts them, from `saved.refreshes` on a
 * resumed run, whose retired tasks `saved.retired` are replayed as before the stop.
 */
export async function createPoolRefresher(
  env: Environment,
  settings: PoolRefreshSettings,
  io: { record: (line: Record<string, unknown>) => void; say: (text: string) => void },
  saved: { refreshes: number; retired?: Task[] } = { refreshes: 0 },
): Promise<PoolRefresher> {
  const documents: StudioDocument[] = readDocuments([settings.docs]);
  const generator = await createRoleClient('generator', settings.generator);
  const solver = await createRoleClient('solver', settings.solver);
  const rules = checkPoolRules(settings.rules ?? OLD_POOL_RULES);
  const retired = [...(saved.retired ?? [])];
  let refresh = saved.refreshes;
  const afterStep = async (step: number, policy: ChatClient): Promise<void> => {
    if ((step + 1) % settings.every !== 0) return;
    // The weights version it measures (LocalChatClient counts its syncs), recorded so a run shows the refresh saw the step's update.
    const policyVersion = (policy as Partial<{ policyVersion: number }>).policyVersion;
    let metrics: PoolRefreshMetrics;
    try {
      metrics = await refreshTaskPool(
        env,
        { documents, generator, generatorModel: settings.generator.model, solver, solverModel: settings.solver.model, policy, k: settings.k, keep: settings.keep, rules },
        refresh,
        step,
        retired,
      );
    } catch (error) {
      throw new Error(`the task-pool refresh after step ${step + 1} failed: ${errorMessage(error)}`);
    }
    refresh += 1;
    const measured = measuredPassRates(metrics);
    io.record({ phase: 'pool-refresh', ...poolRefreshRecord(metrics, policyVersion) });
    io.say(
      `   pool refresh ${metrics.refresh + 1} after step ${step + 1}: ${metrics.candidates} new candidates, ${metrics.added} added, ${metrics.retired} retired (mastered), ` +
        `${metrics.rejoined} of ${metrics.replayed} replayed rejoined (forgotten); pool ${metrics.poolBefore} → ${metrics.poolSize}, ${metrics.retiredTotal} retired in all`,
    );
    if (measured.length > 0)
      io.say(
        passRateHistogram(
          measured.map((passRate, taskIndex) => ({
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
  return { afterStep, hooks: { onGrpoPolicySynced: (metrics, policy) => afterStep(metrics.step, policy) }, refreshes: () => refresh, retired };
}
