/**
 * Difficulty calibration: run a policy K times on every task of an environment and sort the tasks by
 * how often it passes. Per task: pass rate p, reward mean and std, learnability 4p(1−p) (1 at p = ½,
 * 0 when a task always or never passes: GRPO learns nothing from a group whose rewards are equal),
 * and a label for a keep band [lo, hi]: 'too-hard' when p = 0 or p < lo, 'too-easy' when p ≥ hi,
 * else 'learnable'. The learnable tasks are the filtered set to train on.
 */
import type { ChatClient } from '../client.ts';
import type { Environment } from '../environment.ts';
import { evaluate, meanStd, type EvaluateOptions, type EvaluationResult, type RolloutRecord } from '../evaluate.ts';
import type { State, Task } from '../types.ts';

/** How a task sits for training. */
export type CalibrationLabel = 'too-easy' | 'too-hard' | 'learnable';

/** The calibration of one task (a line of calibration.jsonl). */
export interface TaskCalibration {
  taskIndex: number;
  /** The task's question, or its last user message when it has a prompt instead. */
  question: string;
  answer?: string;
  rollouts: number;
  passRate: number;
  rewardMean: number;
  rewardStd: number;
  /** 4p(1−p). */
  learnability: number;
  label: CalibrationLabel;
  /** Rollouts of this task that recorded an error. */
  errors: number;
}

/** Options of `calibrate`. */
export interface CalibrateOptions extends Pick<EvaluateOptions, 'numTasks' | 'concurrency' | 'samplingArgs' | 'model' | 'signal' | 'onProgress' | 'onRecord' | 'tasks'> {
  /** Rollouts per task, K (at least 2 makes the pass rate mean something). */
  rolloutsPerTask: number;
  /** The keep band [lo, hi] of pass rates (default [0, 1]: keep every task that passes sometimes, but not always). */
  keep?: readonly [number, number];
}

/** What `calibrate` returns. */
export interface CalibrationResult {
  tasks: TaskCalibration[];
  /** The learnable tasks, in their original order. */
  kept: Task[];
  counts: Record<CalibrationLabel, number>;
  /** Mean learnability over all tasks. */
  meanLearnability: number;
  keep: [number, number];
  rolloutsPerTask: number;
  /** The underlying evaluation (records, summary, stoppedEarly). */
  evaluation: EvaluationResult;
}

/** Learnability 4p(1−p) of a pass rate. */
export function learnability(passRate: number): number {
  return 4 * passRate * (1 - passRate);
}

/** The label of a pass rate for the keep band [lo, hi]; see the module comment. */
export function calibrationLabel(passRate: number, keep: readonly [number, number] = [0, 1]): CalibrationLabel {
  const [lo, hi] = keep;
  if (passRate >= hi) return 'too-easy';
  if (passRate === 0 || passRate < lo) return 'too-hard';
  return 'learnable';
}

/** Checks a keep band: 0 ≤ lo < hi ≤ 1. */
export function checkKeepBand(keep: readonly [number, number]): [number, number] {
  const [lo, hi] = keep;
  if (!(Number.isFinite(lo) && Number.isFinite(hi) && lo >= 0 && hi <= 1 && lo < hi)) throw new Error(`the keep band must satisfy 0 ≤ lo < hi ≤ 1, got ${lo}-${hi}`);
  return [lo, hi];
}

/** Runs `rolloutsPerTask` rollouts of every task against `policy` and calibrates each task. */
export async function calibrate<S extends State>(env: Environment<S>, policy: ChatClient, options: CalibrateOptions): Promise<CalibrationResult> {
  const keep = checkKeepBand(options.keep ?? [0, 1]);
  const { keep: _keep, ...evaluateOptions } = options;
  const evaluation = await evaluate(env, policy, evaluateOptions);
  const allTasks = options.tasks ?? env.evaluationTasks;
  const tasks = calibrateRecords(evaluation.records, allTasks, keep);
  return {
    tasks,
    kept: tasks.filter((task) => task.label === 'learnable').map((task) => allTasks[task.taskIndex]!),
    counts: countLabels(tasks),
    meanLearnability: tasks.length === 0 ? 0 : tasks.reduce((sum, task) => sum + task.learnability, 0) / tasks.length,
    keep,
    rolloutsPerTask: options.rolloutsPerTask,
    evaluation,
  };
}

/** Calibrates tasks from finished rollouts (grouped by task index); tasks without rollouts are left out. */
export function calibrateRecords(records: readonly RolloutRecord[], tasks: readonly Task[], keep: readonly [number, number] = [0, 1]): TaskCalibration[] {
  const byTask = new Map<number, RolloutRecord[]>();
  for (const record of records) byTask.set(record.taskIndex, [...(byTask.get(record.taskIndex) ?? []), record]);
  return [...byTask.entries()]
    .sort(([a], [b]) => a - b)
    .map(([taskIndex, group]) => {
      const task = tasks[taskIndex];
      const passRate = group.filter((record) => record.passed).length / group.length;
      const reward = meanStd(group.map((record) => record.reward));
      return {
        taskIndex,
        question: taskQuestion(task, group[0]!),
        ...(task?.answer !== undefined ? { answer: task.answer } : {}),
        rollouts: group.length,
        passRate,
        rewardMean: reward.mean,
        rewardStd: reward.std,
        learnability: learnability(passRate),
        label: calibrationLabel(passRate, keep),
        errors: group.filter((record) => record.errors.length > 0).length,
      };
    });
}

function taskQuestion(task: Task | undefined, record: RolloutRecord): string {
  if (task?.question !== undefined) return task.question;
  const prompt = task?.prompt ?? record.prompt;
  return [...prompt].reverse().find((message) => message.role === 'user')?.content ?? '';
}

function countLabels(tasks: readonly TaskCalibration[]): Record<CalibrationLabel, number> {
  const counts: Record<CalibrationLabel, number> = { 'too-easy': 0, 'too-hard': 0, learnable: 0 };
  for (const task of tasks) counts[task.label] += 1;
  return counts;
}

/** One calibration.jsonl line (with its newline). */
export function calibrationLine(task: TaskCalibration): string {
  return `${JSON.stringify(task)}\n`;
}

/**
 * A text histogram of pass rates in `bins` bins over [0, 1] (the last bin includes 1), each row with
 * its range, count and a bar, then the label counts. For terminals and the playground alike.
 */
export function passRateHistogram(tasks: readonly TaskCalibration[], options: { bins?: number; width?: number } = {}): string {
  const bins = Math.max(1, options.bins ?? 10);
  const width = Math.max(1, options.width ?? 40);
  const counts = new Array<number>(bins).fill(0);
  for (const task of tasks) counts[Math.min(bins - 1, Math.floor(task.passRate * bins))]! += 1;
  const most = Math.max(1, ...counts);
  const rows = counts.map((count, i) => {
    const range = `${(i / bins).toFixed(2)}–${((i + 1) / bins).toFixed(2)}`;
    const bar = '█'.repeat(Math.round((count / most) * width));
    return `${range}  ${String(count).padStart(4)}  ${bar}`;
  });
  const labels = countLabels(tasks);
  return [`pass rate   tasks`, ...rows, `too-hard ${labels['too-hard']} · learnable ${labels.learnable} · too-easy ${labels['too-easy']}`].join('\n');
}

/**
 * The same environment over other tasks: a view of `env` whose training and evaluation sets are
 * `tasks` (everything else — prompt, parser, rubric, rollout — is the original's). Calibrated
 * environment files use it to keep only the learnable tasks.
 */
export function withTasks<E extends Environment>(env: E, tasks: Task[]): E {
  if (!Array.isArray(tasks) || tasks.length === 0) throw new Error(`withTasks: ${env.name} needs at least one task`);
  return Object.create(env, { dataset: { value: tasks, enumerable: true }, evalDataset: { value: tasks, enumerable: true } }) as E;
}

/**
 * The source of an environment file that loads the built-in environment `name` (with the
 * `envArgs` it was calibrated with) through `loadBuiltinEnvironment` and keeps only `tasks`.
 */
export function calibratedBuiltinEnvironmentFile(name: string, tasks: readonly Task[], origin = '', envArgs: Record<string, unknown> = {}): string {
  return `/**
 * The learnable tasks of the built-in environment ${name}${origin ? ` (${origin})` : ''}, kept by \`tabrl calibrate\`:
 * the same environment (prompt, parser, rubric), trained only on tasks the policy sometimes passes.
 */
import { loadBuiltinEnvironment, type Environment, type Task } from 'tabrl';
import { withTasks } from 'tabrl/studio';

/** The arguments ${name} was calibrated with; arguments given at load time override them. */
export const ENV_ARGS: Record<string, unknown> = ${JSON.stringify(envArgs, null, 2)};

/** The kept tasks. */
export const TASKS: Task[] = ${JSON.stringify(tasks, null, 2)};

/** Loads ${name} with ENV_ARGS and \`args\` and restricts it to TASKS. */
export default async function loadEnvironment(args: Record<string, unknown> = {}): Promise<Environment> {
  return withTasks(await loadBuiltinEnvironment(${JSON.stringify(name)}, { ...ENV_ARGS, ...args }), TASKS);
}
`;
}

/**
 * The source of an environment file that loads the environment file at `originalImport` (a
 * relative import path, e.g. './original.ts' or '../my-env.ts') and keeps only `tasks`.
 */
export function calibratedEnvironmentFile(originalImport: string, tasks: readonly Task[], origin = ''): string {
  return `/**
 * The learnable tasks of ${originalImport}${origin ? ` (${origin})` : ''}, kept by \`tabrl calibrate\`:
 * the same environment (prompt, parser, rubric), trained only on tasks the policy sometimes passes.
 */
import type { Environment, Task } from 'tabrl';
import { withTasks } from 'tabrl/studio';
import loadOriginal from ${JSON.stringify(originalImport)};

/** The kept tasks. */
export const TASKS: Task[] = ${JSON.stringify(tasks, null, 2)};

/** Loads the original environment with \`args\` and restricts it to TASKS. */
export default async function loadEnvironment(args: Record<string, unknown> = {}): Promise<Environment> {
  const load = loadOriginal as unknown as (args: Record<string, unknown>) => Environment | Promise<Environment>;
  return withTasks(await load(args), TASKS);
}
`;
}
