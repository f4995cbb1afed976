/**
 * `tabrl eval <name | path/to/env.ts>`: runs an environment against an OpenAI-compatible endpoint,
 * shows progress, prints a summary, and writes `results.jsonl` + `metadata.json` as it goes.
 */
import { parseArgs } from 'node:util';
import { join } from 'node:path';
import { evaluate, OpenAIHttpClient, type ChatClient, type SamplingArgs } from '../envs/index.ts';
import { CliError } from './cli-error.ts';
import { LocalChatClient } from '../gpu/inference/local-chat-client.ts';
import { loadEnvironmentSpec } from './load-environment.ts';
import { openModel, parseBackendName } from './open-model.ts';
import { ResultsWriter } from './results-writer.ts';
import { formatSummary, ProgressBar } from './terminal.ts';

/** Usage text of `tabrl eval`. */
export const EVAL_USAGE = `Usage: tabrl eval <name | path/to/env.ts> --base-url URL --model NAME [options]
       tabrl eval <name | path/to/env.ts> --model local:<tiny | model-dir> [--backend cpu|webgpu] [options]

Runs an environment against an OpenAI-compatible chat-completions endpoint, or against a model
running in this process (local:), which also records the sampled token ids and logprobs.

Options:
  --base-url URL          endpoint base URL, e.g. http://localhost:8000/v1
  --model NAME            model name sent to the endpoint, or local:tiny / local:<model-dir>
  --backend B             with local:, where the weights live: cpu (default) or webgpu (Dawn)
  --api-key-env VAR       read the API key from this environment variable (default: OPENAI_API_KEY if set)
  -n, --num-tasks N       tasks to evaluate, from the start of the eval set (default 10)
  -r, --rollouts-per-task R  rollouts per task (default 1; pass@k for k ≤ R)
  --max-tokens N          max tokens per model turn
  --temperature T         sampling temperature
  --top-p P               nucleus sampling
  --seed S                base seed (rollout i gets S + i)
  -c, --concurrency C     rollouts in flight (default 8)
  --env-args JSON         arguments for the environment's loadEnvironment(args)
  --out DIR               output folder (default runs/eval-<env>-<time>)
  --timeout SECONDS       per-request timeout (default 120)
  --no-typecheck          run an environment file without type-checking it first
  --json                  print the summary as JSON instead of a table`;

/** Runs `tabrl eval`; returns the exit code. */
export async function runEval(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
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
      timeout: { type: 'string' },
      'no-typecheck': { type: 'boolean' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(EVAL_USAGE);
    return 0;
  }
  const spec = positionals[0];
  if (!spec || positionals.length > 1) throw new CliError(`give exactly one environment (a built-in name or a file path)\n\n${EVAL_USAGE}`, 2);
  if (!values.model) throw new CliError(`--model is required (the model name the endpoint serves, or local:tiny)\n\n${EVAL_USAGE}`, 2);
  const localModel = values.model.startsWith('local:') ? values.model.slice('local:'.length) : undefined;
  if (localModel === undefined && !values['base-url']) throw new CliError(`--base-url is required (e.g. --base-url http://localhost:8000/v1), or use --model local:tiny\n\n${EVAL_USAGE}`, 2);

  const envArgs = parseJsonObject(values['env-args'], '--env-args');
  const numTasks = parseInteger(values['num-tasks'], '--num-tasks', 10, 1);
  const rolloutsPerTask = parseInteger(values['rollouts-per-task'], '--rollouts-per-task', 1, 1);
  const concurrency = parseInteger(values.concurrency, '--concurrency', 8, 1);
  const timeoutSeconds = parseNumber(values.timeout, '--timeout') ?? 120;
  const samplingArgs: SamplingArgs = stripUndefined({
    max_tokens: values['max-tokens'] === undefined ? undefined : parseInteger(values['max-tokens'], '--max-tokens', 0, 1),
    temperature: parseNumber(values.temperature, '--temperature'),
    top_p: parseNumber(values['top-p'], '--top-p'),
    seed: values.seed === undefined ? undefined : parseInteger(values.seed, '--seed', 0, 0),
  });
  const apiKey = readApiKey(values['api-key-env']);

  const env = await loadEnvironmentSpec(spec, { args: envArgs, typecheck: !values['no-typecheck'] });
  let client: ChatClient;
  if (localModel !== undefined) {
    const model = await openModel(localModel, { backend: parseBackendName(values.backend), seed: samplingArgs.seed ?? 0 });
    client = new LocalChatClient({ backend: model.backend, tokenizer: model.tokenizer, model: values.model, ...(model.createDecoder ? { createDecoder: model.createDecoder } : {}) });
  } else {
    client = new OpenAIHttpClient({ baseURL: values['base-url']!, apiKey, timeoutMs: timeoutSeconds * 1000 });
  }
  const total = Math.min(numTasks, env.evaluationTasks.length) * rolloutsPerTask;
  const outDir = values.out ?? join('runs', `eval-${env.name}-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  const writer = new ResultsWriter(outDir);
  const metadata = {
    environment: spec,
    environment_name: env.name,
    env_args: envArgs,
    model: values.model,
    base_url: values['base-url'] ?? null,
    num_tasks: Math.min(numTasks, env.evaluationTasks.length),
    rollouts_per_task: rolloutsPerTask,
    sampling_args: samplingArgs,
    concurrency,
    started_at: new Date().toISOString(),
  };
  writer.writeMetadata({ ...metadata, status: 'running' });

  const interrupt = new AbortController();
  const onSigint = () => interrupt.abort();
  process.once('SIGINT', onSigint);
  const progress = new ProgressBar(total, env.name);
  let rewardSum = 0;
  let result;
  try {
    result = await evaluate(env, client, {
      numTasks,
      rolloutsPerTask,
      concurrency,
      samplingArgs,
      model: values.model,
      signal: interrupt.signal,
      onRecord: (record) => writer.write(record),
      onProgress: ({ done, record }) => {
        rewardSum += record.reward;
        progress.update(done, `reward ${(rewardSum / done).toFixed(3)}`);
      },
    });
  } finally {
    process.removeListener('SIGINT', onSigint);
    progress.finish();
    await writer.close();
  }

  const status = result.stoppedEarly === 'cancelled' ? 'interrupted' : result.stoppedEarly ? 'failed' : 'completed';
  writer.writeMetadata({
    ...metadata,
    status,
    ...(result.stoppedEarly ? { stopped_early: result.stoppedEarly } : {}),
    finished_at: new Date().toISOString(),
    wall_ms: result.wallMs,
    summary: result.summary,
  });

  const weights = Object.fromEntries(env.rubric.rewards.map((reward) => [reward.name, reward.weight]));
  if (values.json) console.log(JSON.stringify(result.summary));
  else if (result.records.length > 0) console.log(`${env.name} · ${values.model}\n${formatSummary(result.summary, weights)}`);
  console.error(`wrote ${writer.count} rollouts to ${writer.resultsPath} and the summary to ${writer.metadataPath}`);
  if (result.stoppedEarly === 'cancelled') {
    console.error('interrupted: the results above cover the rollouts that finished');
    return 130;
  }
  if (result.stoppedEarly) throw new CliError(`stopped: ${result.stoppedEarly}`);
  return 0;
}

function readApiKey(variable: string | undefined): string | undefined {
  if (variable === undefined) return process.env.OPENAI_API_KEY || undefined;
  const key = process.env[variable];
  if (!key) throw new CliError(`--api-key-env ${variable}: the environment variable ${variable} is not set`, 2);
  return key;
}

function parseJsonObject(text: string | undefined, flag: string): Record<string, unknown> {
  if (text === undefined) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CliError(`${flag} is not valid JSON (${(error as Error).message}): ${text}`, 2);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new CliError(`${flag} must be a JSON object, e.g. '{"numTasks": 50}'`, 2);
  return value as Record<string, unknown>;
}

function parseInteger(text: string | undefined, flag: string, fallback: number, min: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < min) throw new CliError(`${flag} must be an integer ≥ ${min}, got "${text}"`, 2);
  return value;
}

function parseNumber(text: string | undefined, flag: string): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!Number.isFinite(value)) throw new CliError(`${flag} must be a number, got "${text}"`, 2);
  return value;
}

function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
