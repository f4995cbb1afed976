/**
 * `tabrl validate <env>`: a model-free check of an environment. Each task is played by a reference
 * that should pass it — the built-in environment's expert, or the task's own reference answer
 * (`answer`, written in the parser's format), or for a task planted backwards with a goal (a write,
 * which has no answer) its reference path: its planted calls, the goal write last, then "done"
 * (planted-path.ts) — and scored by the environment's rubric; every task
 * where the reference does not pass is reported. A broken reward, a wrong answer in the data or a
 * pass threshold out of reach shows up here before any model is involved. Exit code: 0 when every
 * reference passed, 1 when some did not, 2 for a usage mistake or when there is no reference to play.
 */
import { BUILTIN_ENVIRONMENTS, isBuiltinEnvironment, loadBuiltinExpert } from '../envs/builtin/index.ts';
import { ScriptedClient, type ChatClient, type Environment, type Task, type Trajectory } from '../envs/index.ts';
import { plantedPathOf, plantedPathPolicy } from '../envs/studio/index.ts';
import { CliError } from './cli-error.ts';
import { parseFlags } from './flags.ts';
import { DEFAULT_TIME_LIMIT_MS } from './isolated-environment.ts';
import { closeEnvironment, isEnvironmentPath, loadEnvironmentSpec } from './load-environment.ts';
import { resolve } from 'node:path';

/** Usage text of `tabrl validate`. */
const VALIDATE_USAGE = `Usage: tabrl validate <env-name | path/to/env.ts> [options]

Checks an environment without a model: every task is played by a reference that should pass it and
scored by the environment's rubric; tasks where the reference does not pass are listed.

Options:
  --reference R          expert (a built-in environment's scripted solver) or answers (each task's reference
                         answer, written in the parser's format; a task planted backwards with a goal to reach,
                         a write, plays its planted calls instead, then "done"); default: expert when there is
                         one, else answers
  --split S              train, eval or all (default all: the training tasks and the held-out ones)
  -n, --num-tasks N      at most N tasks of each split (default: every task)
  -c, --concurrency C    rollouts in flight (default 8)
  --env-args JSON        arguments for the environment's loadEnvironment(args)
  --time-limit SECONDS   an environment file's code may run this long without returning, per stretch (default 5)
  --json                 print the report as JSON

Exit code: 0 when every reference passed, 1 when some did not, 2 for a usage mistake or no reference.`;

/** One task whose reference did not pass. */
interface ValidationFailure {
  split: 'train' | 'eval';
  taskIndex: number;
  reward: number;
  scores: Record<string, number>;
  errors: string[];
  stopReason: string;
  /** The start of the reference reply (answers) or of the last reply (expert). */
  reply: string;
}

/** Runs `tabrl validate`; returns the exit code. */
export async function runValidate(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags({
    args: argv,
    allowPositionals: true,
    options: {
      reference: { type: 'string' },
      split: { type: 'string' },
      'num-tasks': { type: 'string', short: 'n' },
      concurrency: { type: 'string', short: 'c' },
      'env-args': { type: 'string' },
      'time-limit': { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(VALIDATE_USAGE);
    return 0;
  }
  const spec = positionals[0];
  if (!spec || positionals.length > 1) throw new CliError(`give exactly one environment (a built-in name or a file path)\n\n${VALIDATE_USAGE}`, 2);
  const reference = values.reference;
  if (reference !== undefined && reference !== 'expert' && reference !== 'answers') throw new CliError(`--reference must be expert or answers, got "${reference}"`, 2);
  const split = values.split ?? 'all';
  if (!['train', 'eval', 'all'].includes(split)) throw new CliError(`--split must be train, eval or all, got "${split}"`, 2);
  const count = (text: string | undefined, flag: string, fallback: number) => {
    if (text === undefined) return fallback;
    const value = Number(text);
    if (!Number.isInteger(value) || value < 1) throw new CliError(`${flag} must be a positive integer, got "${text}"`, 2);
    return value;
  };
  const numTasks = count(values['num-tasks'], '--num-tasks', Number.MAX_SAFE_INTEGER);
  const concurrency = count(values.concurrency, '--concurrency', 8);
  const timeLimitSeconds = values['time-limit'] === undefined ? DEFAULT_TIME_LIMIT_MS / 1000 : Number(values['time-limit']);
  if (!(timeLimitSeconds >= 0.1 && timeLimitSeconds <= 3600)) throw new CliError(`--time-limit must be a number of seconds from 0.1 to 3600, got "${values['time-limit']}"`, 2);
  let envArgs: Record<string, unknown> = {};
  if (values['env-args'] !== undefined) {
    try {
      envArgs = JSON.parse(values['env-args']) as Record<string, unknown>;
    } catch {
      envArgs = null as never;
    }
    if (typeof envArgs !== 'object' || envArgs === null || Array.isArray(envArgs)) throw new CliError(`--env-args must be a JSON object, e.g. '{"numTasks": 20}', got ${values['env-args']}`, 2);
  }

  const env = await loadEnvironmentSpec(isEnvironmentPath(spec) ? resolve(spec) : spec, { args: envArgs, isolation: { timeLimitMs: timeLimitSeconds * 1000 } });
  try {
    const hasExpert = isBuiltinEnvironment(spec);
    const mode = reference ?? (hasExpert ? 'expert' : 'answers');
    if (mode === 'expert' && !hasExpert)
      throw new CliError(`only built-in environments (${Object.keys(BUILTIN_ENVIRONMENTS).join(', ')}) have an expert; use --reference answers to play each task's reference answer`, 2);
    const splits: Array<{ split: 'train' | 'eval'; tasks: Task[] }> = [];
    if (split !== 'eval') splits.push({ split: 'train', tasks: env.dataset.slice(0, numTasks) });
    if (split !== 'train' && env.evalDataset) splits.push({ split: 'eval', tasks: env.evalDataset.slice(0, numTasks) });
    if (split === 'eval' && !env.evalDataset) splits.push({ split: 'eval', tasks: env.dataset.slice(0, numTasks) }); // evaluation uses the training set then
    const total = splits.reduce((sum, s) => sum + s.tasks.length, 0);
    if (total === 0) throw new CliError(`${env.name} has no tasks to validate; check --env-args`, 2);
    if (mode === 'answers') {
      const missing = splits.reduce((sum, s) => sum + s.tasks.filter((task) => (typeof task.answer !== 'string' || task.answer === '') && !plantedGoalPath(task)).length, 0);
      if (missing === total) throw new CliError(`${env.name}'s tasks have no reference answers ("answer"), so there is nothing to play${hasExpert ? '; use --reference expert' : ''}`, 2);
    }
    const expert = mode === 'expert' ? new ScriptedClient(await loadBuiltinExpert(spec as keyof typeof BUILTIN_ENVIRONMENTS, env)) : null;
    const report = await validateEnvironment(env, splits, { concurrency, client: (task) => expert ?? referenceClient(env, task) });
    if (values.json) {
      console.log(JSON.stringify({ environment: env.name, reference: mode, tasks: report.checked, passed: report.checked - report.failures.length, failures: report.failures }, null, 2));
    } else {
      const paths = mode === 'answers' ? splits.reduce((sum, s) => sum + s.tasks.filter(plantedGoalPath).length, 0) : 0;
      const references = mode === 'expert' ? 'expert' : paths > 0 ? `reference answers and planted paths (${paths} task${paths === 1 ? '' : 's'} with a goal to reach)` : 'reference answers';
      console.log(`${env.name}: the ${references} passed ${report.checked - report.failures.length} of ${report.checked} tasks`);
      for (const failure of report.failures) {
        const scores = Object.entries(failure.scores)
          .map(([name, value]) => `${name} ${+value.toFixed(3)}`)
          .join(', ');
        console.log(
          `  ${failure.split} task ${failure.taskIndex}: reward ${+failure.reward.toFixed(3)} (${scores || 'no scores'}), ${failure.stopReason}${failure.errors.length > 0 ? `; ${failure.errors.join('; ')}` : ''}; reply: ${JSON.stringify(failure.reply)}`,
        );
      }
      if (report.failures.length > 0) console.log(`A reference should pass every task: check these tasks' answers, the reward functions and the pass threshold (${env.passThreshold}).`);
    }
    return report.failures.length > 0 ? 1 : 0;
  } finally {
    closeEnvironment(env);
  }
}

/** Plays every task with `client(task)` and returns the tasks whose rollout did not pass. */
async function validateEnvironment(
  env: Environment,
  splits: Array<{ split: 'train' | 'eval'; tasks: Task[] }>,
  options: { concurrency: number; client: (task: Task) => ChatClient },
): Promise<{ checked: number; failures: ValidationFailure[] }> {
  const jobs = splits.flatMap(({ split, tasks }) => tasks.map((task, taskIndex) => ({ split, task, taskIndex })));
  const failures: Array<ValidationFailure & { order: number }> = [];
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const order = next++;
      const { split, task, taskIndex } = jobs[order]!;
      const played = await env.rollout(options.client(task), task, { temperature: 0 }, { taskIndex });
      // Group rewards see a group of one here: the reference alone.
      const trajectory = (await env.scoreGroup([played]))[0]!;
      if (env.isPassed(trajectory)) continue;
      failures.push({ order, ...describeFailure(split, taskIndex, trajectory) });
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency, jobs.length) }, worker));
  return { checked: jobs.length, failures: failures.sort((a, b) => a.order - b.order).map(({ order: _order, ...failure }) => failure) };
}

/** A client that answers every turn with the task's reference answer in the parser's format; for a planted task with a goal, one that plays its reference path. */
function referenceClient(env: Environment, task: Task): ChatClient {
  if (plantedGoalPath(task)) return new ScriptedClient(plantedPathPolicy([task], (reply) => env.parser.formatAnswer(reply)));
  return new ScriptedClient(() => (typeof task.answer === 'string' ? env.parser.formatAnswer(task.answer) : ''));
}

/** Whether a task without a reference answer is planted with a goal (a write) and a reference path that ends in it. */
function plantedGoalPath(task: Task): boolean {
  return (typeof task.answer !== 'string' || task.answer === '') && task.info?.goal !== undefined && plantedPathOf(task) !== undefined;
}

function describeFailure(split: 'train' | 'eval', taskIndex: number, trajectory: Trajectory): ValidationFailure {
  const reply = trajectory.completion.filter((message) => message.role === 'assistant').at(-1)?.content ?? '';
  return {
    split,
    taskIndex,
    reward: trajectory.reward,
    scores: trajectory.scores,
    errors: trajectory.errors.map((error) => `${error.source} ${error.name}: ${error.message}`),
    stopReason: trajectory.stopCondition ?? trajectory.stopReason,
    reply: reply.length > 80 ? `${reply.slice(0, 77)}...` : reply,
  };
}
