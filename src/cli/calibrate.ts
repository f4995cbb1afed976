/**
 * `tabrl calibrate ENV --base-url URL --model NAME -r K --keep LO-HI --out DIR`: runs the policy K
 * times on each task (src/envs/studio/calibrate.ts) and writes DIR/results.jsonl (every rollout, as
 * it finishes), DIR/calibration.jsonl (one line per task: pass rate, reward mean/std, learnability,
 * label), DIR/kept-tasks.jsonl (the learnable tasks), DIR/report.json and DIR/env.ts — the same
 * environment (a file, or a built-in loaded by name) restricted to the learnable tasks. Prints a
 * pass-rate histogram.
 */
import { join, relative, resolve } from 'node:path';
import { summarizeRollouts, evaluate, type RolloutRecord, type ChatClient } from '../envs/index.ts';
import { calibratedBuiltinEnvironmentFile, calibratedEnvironmentFile, calibrationLine, calibrateRecords, checkKeepBand, passRateHistogram } from '../envs/studio/index.ts';
import { recordToJsonLine } from '../envs/results-record.ts';
import { CliError } from './cli-error.ts';
import { DEFAULT_TIME_LIMIT_MS } from './isolated-environment.ts';
import { compileEnvironmentInChild } from './env-compile-process.ts';
import { closeEnvironment, isEnvironmentPath, loadEnvironmentSpec } from './load-environment.ts';
import { createEndpointClient, createRoleClient, roleOptions, roleSettingsFromFlags, type RoleSettings } from './model-roles.ts';
import { judgeSettingsFromFlags, judgeUsage, createJudgeClient } from './judge.ts';
import { lendSimulator, simulatorSettingsFromFlags, simulatorUsage } from './simulator-role.ts';
import { onStopSignal } from './stop-signals.ts';
import { integerFlag, jsonObjectFlag, numberFlag, parseFlags } from './flags.ts';
import { JsonlAppender, prepareStudioFolder, writeWhole } from './studio-output.ts';
import { ProgressBar } from './terminal.ts';
import { errorMessage } from '../common/error-message.ts';
import { OutputWriteError, recordFailureInReport } from './run-status.ts';
import { capText } from '../isolation/message-check.ts';

/** Usage text of `tabrl calibrate`. */
const CALIBRATE_USAGE = `Usage: tabrl calibrate <name | path/to/env.ts> --base-url URL --model NAME -r K --keep LO-HI --out DIR
       tabrl calibrate <name | path/to/env.ts> --model local:<tiny | model-dir> -r K --out DIR

Runs the policy K times on every task and sorts the tasks by pass rate p: too-hard (p = 0 or
p < LO), too-easy (p ≥ HI), learnable otherwise; learnability is 4p(1−p). Training on the learnable
tasks only wastes no GRPO groups whose rewards are all equal.

Options:
  --base-url URL            the policy's endpoint (also --policy-base-url)
  --model NAME              the policy's model name, or local:tiny / local:<model-dir> (also --policy-model)
  --api-key-env VAR         read the policy's API key from this variable (also --policy-api-key-env)
  --backend B               with local:, where the weights live: cpu (default: the fast WASM backend), cpu-reference or webgpu (Dawn)
  -r, --rollouts-per-task K rollouts per task (default 8)
  --keep LO-HI              the learnable band of pass rates (default 0-1: passes sometimes, not always)
  -n, --num-tasks N         tasks from the start of the evaluation set (default: all)
  -c, --concurrency C       rollouts in flight (default 8)
  --max-tokens N            max tokens per model turn
  --temperature T           sampling temperature (default 1: calibration needs varied answers)
  --seed S                  base seed
  --env-args JSON           arguments for the environment's loadEnvironment(args)
  --out DIR                 output folder (required)
  --overwrite               replace the outputs in --out
  --timeout SECONDS         per-request timeout (default 120)
  --time-limit SECONDS      an environment file's code may run this long without returning (default 5)
${judgeUsage(28)}
${simulatorUsage(28)}
  --json                    print the counts as JSON`;

const OUTPUTS = ['results.jsonl', 'calibration.jsonl', 'kept-tasks.jsonl', 'report.json', 'env.ts', 'environment.mjs', 'environment.d.mts'];
/** The types of environment.mjs, so that env.ts type-checks. */
const BUNDLE_DECLARATION = `import type { Environment } from 'tabrl';\n/** The original environment file, bundled. */\nexport default function loadEnvironment(args?: Record<string, unknown>): Environment | Promise<Environment>;\n`;

/** Runs `tabrl calibrate`; returns the exit code. */
export async function runCalibrate(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags({
    args: argv,
    allowPositionals: true,
    options: {
      ...roleOptions(['policy', 'judge', 'simulator']),
      'base-url': { type: 'string' },
      model: { type: 'string' },
      'api-key-env': { type: 'string' },
      backend: { type: 'string' },
      'rollouts-per-task': { type: 'string', short: 'r' },
      keep: { type: 'string' },
      'num-tasks': { type: 'string', short: 'n' },
      concurrency: { type: 'string', short: 'c' },
      'max-tokens': { type: 'string' },
      temperature: { type: 'string' },
      seed: { type: 'string' },
      'env-args': { type: 'string' },
      out: { type: 'string' },
      overwrite: { type: 'boolean' },
      timeout: { type: 'string' },
      'time-limit': { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(CALIBRATE_USAGE);
    return 0;
  }
  const spec = positionals[0];
  if (!spec || positionals.length > 1) throw new CliError(`give exactly one environment (a built-in name or a file path)\n\n${CALIBRATE_USAGE}`, 2);
  if (!values.out) throw new CliError('--out DIR is required (the folder for calibration.jsonl, kept-tasks.jsonl and env.ts)', 2);
  const policySettings = roleSettingsFromFlags(
    {
      'policy-base-url': values['policy-base-url'] ?? values['base-url'],
      'policy-model': values['policy-model'] ?? values.model,
      'policy-api-key-env': values['policy-api-key-env'] ?? values['api-key-env'],
    },
    'policy',
    { required: true, purpose: '(the policy to calibrate; --model and --base-url work too)' },
  )!;
  const rolloutsPerTask = integerFlag(values['rollouts-per-task'], '--rollouts-per-task', 8, 1);
  const keep = parseKeep(values.keep);
  const timeoutMs = numberFlag(values.timeout, '--timeout', 120, 0.001, 86_400) * 1000;
  const timeLimitMs = numberFlag(values['time-limit'], '--time-limit', DEFAULT_TIME_LIMIT_MS / 1000, 0.1, 3600) * 1000;
  const samplingArgs = {
    temperature: numberFlag(values.temperature, '--temperature', 1, 0, 10),
    ...(values['max-tokens'] !== undefined ? { max_tokens: integerFlag(values['max-tokens'], '--max-tokens', 0, 1) } : {}),
    ...(values.seed !== undefined ? { seed: integerFlag(values.seed, '--seed', 0, 0) } : {}),
  };
  const judgeSettings = judgeSettingsFromFlags(values);
  const simulatorSettings = simulatorSettingsFromFlags(values);
  prepareStudioFolder(values.out, OUTPUTS, values.overwrite === true);
  const out = values.out;

  const policy: ChatClient = policySettings.model.startsWith('local:')
    ? await createRoleClient('policy', policySettings, { backend: values.backend, seed: samplingArgs.seed ?? 0 })
    : createEndpointClient('policy', policySettings, { timeoutMs });
  const judge = judgeSettings ? { client: createJudgeClient(judgeSettings, timeoutMs), model: judgeSettings.model } : undefined;
  const envArgs = jsonObjectFlag(values['env-args'], '--env-args');
  const simulator = simulatorSettings ? await lendSimulator(simulatorSettings, timeoutMs) : undefined;
  const env = await loadEnvironmentSpec(spec, { args: envArgs, isolation: { timeLimitMs }, ...(judge ? { judge } : {}), ...(simulator ? { simulator } : {}) });
  try {
    const tasks = env.evaluationTasks;
    const numTasks = Math.min(integerFlag(values['num-tasks'], '--num-tasks', tasks.length, 1), tasks.length);
    if (numTasks === 0) throw new CliError(`${env.name} has no tasks to calibrate; check --env-args`);
    const results = new JsonlAppender(join(out, 'results.jsonl'));
    const stop = onStopSignal();
    const progress = new ProgressBar(numTasks * rolloutsPerTask, `calibrate ${env.name}`);
    let evaluation;
    try {
      evaluation = await evaluate(env, policy, {
        numTasks,
        rolloutsPerTask,
        concurrency: integerFlag(values.concurrency, '--concurrency', 8, 1),
        samplingArgs,
        model: policySettings.model,
        signal: stop.signal,
        onRecord: (record: RolloutRecord) => results.append(recordToJsonLine(record)),
        onProgress: ({ done }) => progress.update(done, ''),
      });
    } finally {
      stop.dispose();
      progress.finish();
    }
    const calibration = calibrateRecords(evaluation.records, tasks, keep);
    const lines = new JsonlAppender(join(out, 'calibration.jsonl'));
    for (const task of calibration) lines.append(calibrationLine(task));
    const kept = calibration.filter((task) => task.label === 'learnable').map((task) => tasks[task.taskIndex]!);
    const keptLines = new JsonlAppender(join(out, 'kept-tasks.jsonl'));
    for (const task of kept) keptLines.append(`${JSON.stringify(task)}\n`);
    const counts = { 'too-easy': 0, 'too-hard': 0, learnable: 0 };
    for (const task of calibration) counts[task.label] += 1;
    const interrupted = stop.received !== undefined;
    const complete = !interrupted && !evaluation.stoppedEarly;
    writeWhole(
      join(out, 'report.json'),
      `${JSON.stringify({ status: interrupted ? 'interrupted' : evaluation.stoppedEarly ? 'failed' : 'completed', environment: spec, env_args: envArgs, policy: policySettings satisfies RoleSettings, ...(judgeSettings ? { judge: judgeSettings } : {}), ...(simulatorSettings ? { simulator: simulatorSettings } : {}), rollouts_per_task: rolloutsPerTask, keep, counts, tasks: calibration.length, mean_learnability: calibration.reduce((sum, task) => sum + task.learnability, 0) / Math.max(1, calibration.length), summary: summarizeRollouts(evaluation.records, rolloutsPerTask), ...(evaluation.stoppedEarly ? { stopped_early: evaluation.stoppedEarly } : {}) }, null, 2)}\n`,
    );
    let envNote: string;
    if (kept.length > 0 && complete) {
      const origin = `K = ${rolloutsPerTask}, keep ${keep[0]}-${keep[1]}`;
      let source: string;
      if (isEnvironmentPath(spec)) {
        // An environment file sees only its own folder when it runs (env-bundle-guard.ts), so env.ts
        // imports a bundle of the original (its own imports included) written beside it, bundled without the host's environment.
        writeWhole(join(out, 'environment.mjs'), (await compileEnvironmentInChild(resolve(spec), { format: 'esm' })).bundle!);
        writeWhole(join(out, 'environment.d.mts'), BUNDLE_DECLARATION);
        source = calibratedEnvironmentFile('./environment.mjs', kept, `${relative(resolve(out), resolve(spec)).split('\\').join('/')}, ${origin}`);
      } else {
        // A built-in: the file loads it by name from 'tabrl' with the same --env-args.
        source = calibratedBuiltinEnvironmentFile(spec, kept, origin, envArgs);
      }
      writeWhole(join(out, 'env.ts'), source);
      envNote = ` and ${join(out, 'env.ts')} (the environment over the learnable tasks)`;
    } else {
      envNote = !complete ? '; the run did not finish, so there is no env.ts' : '; no task is learnable, so there is no env.ts';
    }
    if (values.json) console.log(JSON.stringify({ counts, tasks: calibration.length, kept: kept.length }));
    else console.log(`${env.name} · ${policySettings.model} · ${rolloutsPerTask} rollouts per task\n${passRateHistogram(calibration)}`);
    console.error(`wrote ${results.count} rollouts to ${results.path}, ${calibration.length} tasks to ${lines.path}, ${kept.length} learnable tasks to ${keptLines.path}${envNote}`);
    if (interrupted) {
      console.error(`interrupted: ${results.path} holds every rollout that finished, and ${lines.path} calibrates the tasks from them; run again to calibrate all`);
      return stop.exitCode;
    }
    if (evaluation.stoppedEarly) throw new CliError(`stopped: ${evaluation.stoppedEarly} (the calibration covers the rollouts that finished)`);
    return 0;
  } catch (error) {
    recordFailureInReport(join(out, 'report.json'), { environment: spec }, capText(errorMessage(error), 2000));
    if (error instanceof OutputWriteError)
      throw new CliError(`${error.message}; ${join(out, 'results.jsonl')} holds the rollouts that finished. Make room (or fix the folder), then run it again with --out ${out} --overwrite`);
    throw error;
  } finally {
    closeEnvironment(env);
  }
}

/** Parses `--keep LO-HI` (e.g. 0.1-0.9). */
export function parseKeep(text: string | undefined): [number, number] {
  if (text === undefined) return [0, 1];
  const match = /^\s*(\d*\.?\d+)\s*-\s*(\d*\.?\d+)\s*$/.exec(text);
  if (!match) throw new CliError(`--keep must be LO-HI with 0 ≤ LO < HI ≤ 1, e.g. --keep 0.1-0.9; got "${text}"`, 2);
  try {
    return checkKeepBand([Number(match[1]), Number(match[2])]);
  } catch (error) {
    throw new CliError(`--keep ${text}: ${errorMessage(error)}`, 2);
  }
}
