/**
 * `tabrl eval <name | path/to/env.ts>`: runs an environment against an OpenAI-compatible endpoint,
 * shows progress, prints a summary, and writes `results.jsonl` + `metadata.json` as it goes.
 * `tabrl eval --resume DIR` continues an interrupted evaluation, running only the rollouts that
 * DIR/results.jsonl does not hold yet. The exit code tells how it went: 0 when it finished and
 * some rollout ran to the end, 1 when every rollout failed, every weighted reward function failed
 * in every rollout, or a fatal error stopped it, 2 for a usage mistake, 130/143 when interrupted by
 * Ctrl-C/SIGTERM.
 */
import { join, resolve } from 'node:path';
import { ChatClientError, evaluate, MAX_TIMEOUT_MS, OpenAIHttpClient, type ChatClient, type RolloutRecord, type SamplingArgs } from '../envs/index.ts';
import { formatPanelReport, type JudgePanelClient } from '../envs/studio/index.ts';
import { brokenRewardsReason, rubricRewardWeights } from '../envs/broken-rewards.ts';
import { CliError } from './cli-error.ts';
import { conflictingResumeFlags } from './eval-resume-flags.ts';
import { lettingEventsRun } from './let-events-run.ts';
import { LocalChatClient } from '../gpu/inference/local-chat-client.ts';
import { DEFAULT_TIME_LIMIT_MS } from './isolated-environment.ts';
import { closeEnvironment, isEnvironmentPath, loadEnvironmentSpec } from './load-environment.ts';
import { openModel, parseBackendName } from './open-model.ts';
import { shippedModelIds } from '../models/shipped-models.ts';
import { prepareOutputFolder, readFinishedResults, readMetadata, ResultsWriter } from './results-writer.ts';
import { onStopSignal } from './stop-signals.ts';
import { capText } from '../isolation/message-check.ts';
import { errorMessage } from '../common/error-message.ts';
import { formatSummary, ProgressBar } from './terminal.ts';
import { createJudgeClient, judgeUsage, judgeSettingsFromFlags, type JudgeSettings } from './judge.ts';
import { checkSimulatorSettings, lendSimulator, recordedSimulatorNote, SIMULATOR_FLAG_OPTIONS, simulatorSettingsFromFlags, simulatorUsage } from './simulator-role.ts';
import type { RoleSettings } from './model-roles.ts';
import { checkJudgePanel, createJudgePanelClient, judgePanelMetadata, readJudgePanelFile, splitRecordIds, type JudgePanelSettings } from './judge-panel-file.ts';
import { tabrlVersion } from './version.ts';
import { integerFlag, jsonObjectFlag, numberFlag, parseFlags } from './flags.ts';

/** Usage text of `tabrl eval`. */
const EVAL_USAGE = `Usage: tabrl eval <name | path/to/env.ts> --base-url URL --model NAME [options]
       tabrl eval <name | path/to/env.ts> --model local:<tiny | ${shippedModelIds().join(' | ')} | model-dir> [--backend cpu|cpu-reference|webgpu] [options]

Runs an environment against an OpenAI-compatible chat-completions endpoint, or against a model
running in this process (local:), which also records the sampled token ids and logprobs.

Options:
  --base-url URL          endpoint base URL, e.g. http://localhost:8000/v1
  --model NAME            model name sent to the endpoint, or local:tiny / ${shippedModelIds()
    .map((id) => `local:${id}`)
    .join(' / ')} / local:<model-dir>
  --backend B             with local:, where the weights live: cpu (default: the fast WASM backend), cpu-reference
                          (the plain-TypeScript oracle) or webgpu (Dawn)
  --api-key-env VAR       read the API key from this environment variable (default: OPENAI_API_KEY if set)
  -n, --num-tasks N       tasks to evaluate, from the start of the eval set (default 10)
  -r, --rollouts-per-task R  rollouts per task (default 1; pass@k for k ≤ R)
  --max-tokens N          max tokens per model turn
  --temperature T         sampling temperature
  --top-p P               nucleus sampling
  --seed S                base seed (rollout i gets S + i)
  -c, --concurrency C     rollouts in flight (default 8)
  --env-args JSON         arguments for the environment's loadEnvironment(args)
  --out DIR               output folder (default runs/eval-<env>-<time>); one that holds results is refused
  --overwrite             replace the results in --out
  --resume DIR            continue the evaluation in DIR with its settings, running only the rollouts that
                          DIR/results.jsonl does not hold (--api-key-env and the limits may be given again;
                          the original command's flags are accepted when their values are the run's)
  --timeout SECONDS       per-request timeout (default 120)
  --max-retries N         retries of a request after a 429, 5xx, timeout or broken answer (default 3)
  --max-consecutive-timeouts N  stop the run after N rollouts in a row timed out (default 5; 0 = never)
  --time-limit SECONDS    an environment file's code may run this long without returning, per stretch (default 5,
                          as in the playground; loading it may take twice as long)
${judgeUsage(26)}
  --judges FILE           a panel of judge endpoints lent as one judge: JSON {"aggregation": "mean|majority|unanimous",
                          "judges": [{"name", "baseUrl", "model", "apiKeyEnv"?}, …]}; the summary and metadata.json
                          (judge_panel) get the panel's agreement (pairwise, Fleiss' kappa) and the split rollouts
${simulatorUsage(26)}
  --state-columns A,B     copy these fields of each rollout's final state to the top level of its results.jsonl line
  --no-typecheck          run an environment file without type-checking it first
  --json                  print the summary as JSON instead of a table

An environment file runs in its own process, with no API keys, no file writes, no network and no
child processes; built-in environments run in this process.`;

/** What metadata.json records of a run's settings; --resume reads them back. */
interface EvalSettings {
  environment: string;
  environment_name: string;
  env_args: Record<string, unknown>;
  model: string;
  base_url: string | null;
  backend?: string;
  num_tasks: number;
  rollouts_per_task: number;
  sampling_args: SamplingArgs;
  concurrency: number;
  judge?: JudgeSettings;
  /** A panel of judges lent as one (`--judges FILE`); metadata.json adds its agreement after the run. */
  judge_panel?: JudgePanelSettings;
  /** A tool simulator lent to the environment as args.simulatorClient (`--simulator-*`). */
  simulator?: RoleSettings;
  /** State fields copied to the top level of each results line. */
  state_columns?: string[];
  started_at: string;
}

/** Runs `tabrl eval`; returns the exit code. */
export async function runEval(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags({
    args: argv,
    allowPositionals: true,
    options: {
      'base-url': { type: 'string' },
      backend: { type: 'string' },
      model: { type: 'string' },
      'api-key-env': { type: 'string' },
      'num-tasks': { type: 'string', short: 'n' },
      'rollouts-per-task': { type: 'string', short: 'r' },
      'max-tokens': { type: 'string' },
      temperature: { type: 'string' },
      'top-p': { type: 'string' },
      seed: { type: 'string' },
      concurrency: { type: 'string', short: 'c' },
      'env-args': { type: 'string' },
      out: { type: 'string' },
      overwrite: { type: 'boolean' },
      resume: { type: 'string' },
      timeout: { type: 'string' },
      'max-retries': { type: 'string' },
      'max-consecutive-timeouts': { type: 'string' },
      'time-limit': { type: 'string' },
      'judge-base-url': { type: 'string' },
      'judge-model': { type: 'string' },
      'judge-api-key-env': { type: 'string' },
      judges: { type: 'string' },
      ...SIMULATOR_FLAG_OPTIONS,
      'state-columns': { type: 'string' },
      'no-typecheck': { type: 'boolean' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(EVAL_USAGE);
    return 0;
  }
  const timeoutSeconds = numberFlag(values.timeout, '--timeout', undefined, 0.001, MAX_TIMEOUT_MS / 1000) ?? 120;
  const maxRetries = integerFlag(values['max-retries'], '--max-retries', 3, 0);
  const maxConsecutiveTimeouts = integerFlag(values['max-consecutive-timeouts'], '--max-consecutive-timeouts', 5, 0);
  const timeLimitMs = (numberFlag(values['time-limit'], '--time-limit', undefined, 0.1, 3600) ?? DEFAULT_TIME_LIMIT_MS / 1000) * 1000;

  let settings: EvalSettings;
  let outDir: string;
  let previous: RolloutRecord[] = [];
  let resumedAt: string[] = [];
  if (values.resume !== undefined) {
    outDir = values.resume;
    const metadata = readMetadata(outDir);
    settings = checkSettings(metadata, join(outDir, 'metadata.json'));
    // The original command with --resume added is fine; only values that differ from the run's are refused.
    const conflicts = conflictingResumeFlags(values, positionals, settings, outDir, parseStateColumns);
    if (conflicts.length > 0)
      throw new CliError(
        `--resume continues the run in ${outDir} with the settings in its metadata.json; these differ from them: ${conflicts.join('; ')}. Leave them out, or start a new run with --out`,
        2,
      );
    const finished = readFinishedResults(join(outDir, 'results.jsonl'));
    previous = finished.records.filter((record) => record.taskIndex < settings.num_tasks && record.rolloutIndex < settings.rollouts_per_task);
    resumedAt = [...(Array.isArray(metadata.resumed_at) ? (metadata.resumed_at as string[]) : []), new Date().toISOString()];
    if (finished.droppedTail) console.error(`${join(outDir, 'results.jsonl')}: dropped an unfinished last line (${finished.droppedTail} bytes); that rollout runs again`);
  } else {
    const spec = positionals[0];
    if (!spec || positionals.length > 1) throw new CliError(`give exactly one environment (a built-in name or a file path)\n\n${EVAL_USAGE}`, 2);
    if (!values.model) throw new CliError(`--model is required (the model name the endpoint serves, or local:tiny)\n\n${EVAL_USAGE}`, 2);
    if (!values.model.startsWith('local:') && !values['base-url'])
      throw new CliError(`--base-url is required (e.g. --base-url http://localhost:8000/v1), or use --model local:tiny\n\n${EVAL_USAGE}`, 2);
    const seed = values.seed === undefined ? undefined : integerFlag(values.seed, '--seed', 0, 0);
    const judge = judgeSettingsFromFlags(values);
    if (judge && values.judges !== undefined) throw new CliError('give one judge (--judge-base-url, --judge-model) or a panel (--judges FILE), not both', 2);
    const judgePanel = values.judges === undefined ? undefined : readJudgePanelFile(values.judges);
    const simulator = simulatorSettingsFromFlags(values);
    const recorded = recordedSimulatorNote(spec, simulator);
    if (recorded) console.error(recorded);
    settings = {
      environment: isEnvironmentPath(spec) ? resolve(spec) : spec,
      environment_name: spec,
      env_args: jsonObjectFlag(values['env-args'], '--env-args'),
      model: values.model,
      base_url: values['base-url'] ?? null,
      ...(values.backend !== undefined ? { backend: parseBackendName(values.backend) } : {}),
      num_tasks: integerFlag(values['num-tasks'], '--num-tasks', 10, 1),
      rollouts_per_task: integerFlag(values['rollouts-per-task'], '--rollouts-per-task', 1, 1),
      sampling_args: stripUndefined({
        max_tokens: values['max-tokens'] === undefined ? undefined : integerFlag(values['max-tokens'], '--max-tokens', 0, 1),
        temperature: numberFlag(values.temperature, '--temperature', undefined, 0, 10),
        top_p: numberFlag(values['top-p'], '--top-p', undefined, 0, 1),
        seed,
      }),
      concurrency: integerFlag(values.concurrency, '--concurrency', 8, 1),
      ...(judge ? { judge } : {}),
      ...(judgePanel ? { judge_panel: judgePanel } : {}),
      ...(simulator ? { simulator } : {}),
      ...(values['state-columns'] !== undefined ? { state_columns: parseStateColumns(values['state-columns']) } : {}),
      started_at: new Date().toISOString(),
    };
    outDir = values.out ?? join('runs', `eval-${spec.replace(/[^\w.-]+/g, '_')}-${new Date().toISOString().replace(/[:.]/g, '-')}`);
    prepareOutputFolder(outDir, { overwrite: values.overwrite === true, resumeHint: `tabrl eval --resume ${outDir}`, what: 'an evaluation' });
  }
  const localModel = settings.model.startsWith('local:') ? settings.model.slice('local:'.length) : undefined;
  const apiKey = readApiKey(values['api-key-env']);

  let client: ChatClient;
  if (localModel === undefined) {
    try {
      client = new OpenAIHttpClient({ baseURL: settings.base_url ?? '', apiKey, timeoutMs: Math.round(timeoutSeconds * 1000), maxRetries });
    } catch (error) {
      if (error instanceof ChatClientError) throw new CliError(`--base-url ${settings.base_url}: ${error.message}`, 2);
      throw error;
    }
  }
  const panel = settings.judge_panel ? createJudgePanelClient(settings.judge_panel, Math.round(timeoutSeconds * 1000)) : undefined;
  const judge = settings.judge ? { client: createJudgeClient(settings.judge, Math.round(timeoutSeconds * 1000)), model: settings.judge.model } : panel ? { client: panel, model: 'panel' } : undefined;
  const simulator = settings.simulator ? await lendSimulator(settings.simulator, Math.round(timeoutSeconds * 1000)) : undefined;
  const env = await loadEnvironmentSpec(settings.environment, {
    args: settings.env_args,
    typecheck: !values['no-typecheck'],
    isolation: { timeLimitMs },
    ...(judge ? { judge } : {}),
    ...(simulator ? { simulator } : {}),
  });
  try {
    const numTasks = Math.min(settings.num_tasks, env.evaluationTasks.length);
    if (numTasks === 0) throw new CliError(`${env.name} has no tasks to evaluate (its evaluation set is empty); check --env-args`);
    if (localModel !== undefined) {
      const model = await openModel(localModel, { backend: parseBackendName(settings.backend), seed: settings.sampling_args.seed ?? 0 });
      console.error(`${model.label} on ${model.device}`);
      // Ctrl-C must reach its handler between completions decoded on the CPU.
      client = lettingEventsRun(
        new LocalChatClient({ backend: model.backend, tokenizer: model.tokenizer, model: settings.model, ...(model.createDecoder ? { createDecoder: model.createDecoder } : {}) }),
      );
    }
    return await runEvaluation(env, client!, settings, { outDir, numTasks, previous, resumedAt, maxConsecutiveTimeouts, json: values.json === true, ...(panel ? { panel } : {}) });
  } finally {
    closeEnvironment(env);
  }
}

/** Runs the evaluation into `outDir`, prints the summary and returns the exit code. */
async function runEvaluation(
  env: Awaited<ReturnType<typeof loadEnvironmentSpec>>,
  client: ChatClient,
  settings: EvalSettings,
  run: { outDir: string; numTasks: number; previous: RolloutRecord[]; resumedAt: string[]; maxConsecutiveTimeouts: number; json: boolean; panel?: JudgePanelClient },
): Promise<number> {
  const total = run.numTasks * settings.rollouts_per_task;
  const resuming = run.resumedAt.length > 0;
  const writer = new ResultsWriter(run.outDir, { append: resuming, ...(settings.state_columns ? { stateColumns: settings.state_columns } : {}) });
  // The rubric's weights and metric kinds travel with the results, so `tabrl audit RUN_DIR` reads the scores as the rubric meant them.
  const rubric = { reward_weights: rubricRewardWeights(env.rubric), metric_kinds: env.rubric.metricKinds };
  const metadata: Record<string, unknown> = { ...settings, environment_name: env.name, num_tasks: run.numTasks, ...rubric, ...tabrlVersion(), ...(resuming ? { resumed_at: run.resumedAt } : {}) };
  writer.writeMetadata({ ...metadata, status: 'running' });
  if (resuming) console.error(`resuming: ${run.previous.length} of ${total} rollouts are in ${writer.resultsPath}; running the other ${total - run.previous.length}`);

  // A second Ctrl-C exits at once; the metadata says so first.
  const stop = onStopSignal({ beforeForcedExit: () => writer.writeMetadata({ ...metadata, status: 'interrupted', stopped_by: stop.received, finished_at: new Date().toISOString() }) });
  const progress = new ProgressBar(total, env.name);
  let rewardSum = 0;
  let writeError: Error | undefined;
  let result;
  try {
    result = await evaluate(env, client, {
      numTasks: run.numTasks,
      rolloutsPerTask: settings.rollouts_per_task,
      concurrency: settings.concurrency,
      samplingArgs: settings.sampling_args,
      model: settings.model,
      signal: stop.signal,
      previous: run.previous,
      ...(run.maxConsecutiveTimeouts > 0 ? { maxConsecutiveTimeouts: run.maxConsecutiveTimeouts } : {}),
      onRecord: (record) =>
        writer.write(record).catch((error: Error) => {
          writeError ??= error;
          stop.abort();
        }),
      onProgress: ({ done, record }) => {
        rewardSum += record.reward;
        progress.update(done, `reward ${(rewardSum / done).toFixed(3)}`);
      },
    });
  } catch (error) {
    // Whatever broke here, the metadata does not stay "running".
    writer.writeMetadata({ ...metadata, status: 'failed', stopped_early: capText(errorMessage(error), 2000), finished_at: new Date().toISOString() });
    throw error;
  } finally {
    stop.dispose();
    progress.finish();
    await writer.close();
  }

  const failedRollouts = result.records.filter((record) => record.stopReason === 'error').length;
  const everyRolloutFailed = result.records.length > 0 && failedRollouts === result.records.length;
  const interrupted = result.stoppedEarly === 'cancelled' && !writeError;
  const reason = writeError
    ? `could not write ${writer.resultsPath}: ${writeError.message}; make room (or fix the folder), then continue with tabrl eval --resume ${run.outDir}`
    : interrupted
      ? undefined
      : (result.stoppedEarly ??
        (everyRolloutFailed ? `every rollout failed; the first error: ${Object.values(result.summary.firstErrors)[0] ?? 'unknown'}` : brokenRewardsAdvice(result.records, rubric.reward_weights)));
  const status = interrupted ? 'interrupted' : reason ? 'failed' : 'completed';
  // The panel's agreement covers the calls of this session (a resumed run's earlier calls are not known here).
  const panelReport = run.panel?.report();
  const panelSplit = run.panel && panelReport ? splitRecordIds(run.panel, panelReport, result.records) : [];
  try {
    writer.writeMetadata({
      ...metadata,
      ...(settings.judge_panel && panelReport ? { judge_panel: judgePanelMetadata(settings.judge_panel, panelReport, panelSplit) } : {}),
      status,
      ...(reason ? { stopped_early: reason } : {}),
      ...(interrupted ? { stopped_by: stop.received } : {}),
      finished_at: new Date().toISOString(),
      wall_ms: result.wallMs,
      summary: result.summary,
    });
  } catch (error) {
    throw new CliError(`${errorMessage(error)}; make room, then continue with tabrl eval --resume ${run.outDir}`);
  }

  const weights = Object.fromEntries(env.rubric.rewards.map((reward) => [reward.name, reward.weight]));
  if (run.json) console.log(JSON.stringify(result.summary));
  else if (result.records.length > 0) console.log(`${env.name} · ${settings.model}\n${formatSummary(result.summary, weights)}${panelReport ? `\n${formatPanelReport(panelReport, panelSplit)}` : ''}`);
  console.error(`wrote ${writer.count} rollouts to ${writer.resultsPath}${resuming ? ` (${run.previous.length} were there before)` : ''} and the summary to ${writer.metadataPath}`);
  if (interrupted) {
    console.error(`interrupted: the results cover the rollouts that finished; continue with tabrl eval --resume ${run.outDir}`);
    return stop.exitCode;
  }
  if (reason) throw new CliError(`stopped: ${reason}`);
  return 0;
}

/** The shared rule's reason (src/envs/broken-rewards.ts) with what to do here, or undefined when the rewards measure something. */
function brokenRewardsAdvice(records: readonly RolloutRecord[], weights: Readonly<Record<string, number>>): string | undefined {
  const reason = brokenRewardsReason(records, weights);
  return reason && `${reason}. Fix it and run again with --overwrite`;
}

/** The settings of a run from its metadata.json, checked field by field. */
function checkSettings(metadata: Record<string, unknown>, path: string): EvalSettings {
  const bad = (field: string, expected: string) => new CliError(`${path}: "${field}" should be ${expected}; this folder cannot be resumed (start a new run with --out)`, 2);
  const text = (field: string) => {
    if (typeof metadata[field] !== 'string') throw bad(field, 'a string');
    return metadata[field] as string;
  };
  const count = (field: string) => {
    const value = metadata[field];
    if (!Number.isInteger(value) || (value as number) < 1) throw bad(field, 'a positive integer');
    return value as number;
  };
  const object = (field: string) => {
    const value = metadata[field];
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw bad(field, 'a JSON object');
    return value as Record<string, unknown>;
  };
  if (metadata.base_url !== null && typeof metadata.base_url !== 'string') throw bad('base_url', 'a URL or null');
  return {
    environment: text('environment'),
    environment_name: text('environment_name'),
    env_args: object('env_args'),
    model: text('model'),
    base_url: metadata.base_url as string | null,
    ...(typeof metadata.backend === 'string' ? { backend: metadata.backend } : {}),
    num_tasks: count('num_tasks'),
    rollouts_per_task: count('rollouts_per_task'),
    sampling_args: object('sampling_args') as SamplingArgs,
    concurrency: count('concurrency'),
    ...(checkJudge(metadata.judge, path) ?? {}),
    ...(metadata.judge_panel !== undefined ? { judge_panel: checkJudgePanel(metadata.judge_panel, `${path}: judge_panel`) } : {}),
    ...(metadata.simulator !== undefined ? { simulator: checkSimulatorSettings(metadata.simulator, path)! } : {}),
    ...(metadata.state_columns !== undefined ? { state_columns: stateColumnsOf(metadata.state_columns, bad) } : {}),
    started_at: text('started_at'),
  };
}

function checkJudge(value: unknown, path: string): { judge: JudgeSettings } | undefined {
  if (value === undefined) return undefined;
  const judge = value as Partial<JudgeSettings> | null;
  if (typeof judge !== 'object' || judge === null || typeof judge.baseUrl !== 'string' || typeof judge.model !== 'string' || (judge.apiKeyEnv !== undefined && typeof judge.apiKeyEnv !== 'string')) {
    throw new CliError(`${path}: "judge" should be { baseUrl, model, apiKeyEnv? }; this folder cannot be resumed (start a new run with --out)`, 2);
  }
  return { judge: judge as JudgeSettings };
}

function readApiKey(variable: string | undefined): string | undefined {
  if (variable === undefined) return process.env.OPENAI_API_KEY || undefined;
  const key = process.env[variable];
  if (!key) throw new CliError(`--api-key-env ${variable}: the environment variable ${variable} is not set`, 2);
  return key;
}

function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** `--state-columns a,b`: the state field names, each a plain identifier. */
function parseStateColumns(text: string): string[] {
  const names = text
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  const bad = names.find((name) => !/^[A-Za-z_$][\w$]*$/.test(name));
  if (names.length === 0 || bad !== undefined) throw new CliError(`--state-columns takes state field names separated by commas, e.g. --state-columns guesses,won; got "${text}"`, 2);
  return names;
}

/** The saved --state-columns of a run being resumed. */
function stateColumnsOf(value: unknown, bad: (field: string, expected: string) => CliError): string[] {
  if (!Array.isArray(value) || !value.every((name) => typeof name === 'string')) throw bad('state_columns', 'a list of state field names');
  return value as string[];
}
