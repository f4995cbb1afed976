/**
 * A judge model for the CLI (`--judge-base-url`, `--judge-model`, `--judge-api-key-env`): an
 * OpenAI-compatible client held by `tabrl` and lent to the environment's `loadEnvironment(args)` as
 * `args.judgeClient` (with `args.judgeModel`). An environment file's process gets a stand-in whose
 * calls come back here, so the judge's key never reaches environment code.
 */
import { ChatClientError, OpenAIHttpClient, type ChatClient } from '../envs/index.ts';
import { CliError } from './cli-error.ts';

/** Where the judge is; kept in a run's metadata (never the key itself, only the variable that holds it). */
export interface JudgeSettings {
  baseUrl: string;
  model: string;
  apiKeyEnv?: string;
}

/** The judge settings from the flags, or undefined when no judge was asked for. */
export function judgeSettingsFromFlags(values: { 'judge-base-url'?: string; 'judge-model'?: string; 'judge-api-key-env'?: string }): JudgeSettings | undefined {
  const baseUrl = values['judge-base-url'];
  if (baseUrl === undefined) {
    if (values['judge-model'] !== undefined || values['judge-api-key-env'] !== undefined) throw new CliError('--judge-model and --judge-api-key-env need --judge-base-url (the judge endpoint, e.g. http://localhost:8000/v1)', 2);
    return undefined;
  }
  return { baseUrl, model: values['judge-model'] ?? 'default', ...(values['judge-api-key-env'] !== undefined ? { apiKeyEnv: values['judge-api-key-env'] } : {}) };
}

/** The judge's client, reading its key from the named variable now. */
export function createJudgeClient(settings: JudgeSettings, timeoutMs: number): ChatClient {
  let apiKey: string | undefined;
  if (settings.apiKeyEnv !== undefined) {
    apiKey = process.env[settings.apiKeyEnv];
    if (!apiKey) throw new CliError(`--judge-api-key-env ${settings.apiKeyEnv}: the environment variable ${settings.apiKeyEnv} is not set`, 2);
  }
  try {
    return new OpenAIHttpClient({ baseURL: settings.baseUrl, apiKey, timeoutMs });
  } catch (error) {
    if (error instanceof ChatClientError) throw new CliError(`--judge-base-url ${settings.baseUrl}: ${error.message}`, 2);
    throw error;
  }
}

/** Judge usage text shared by `tabrl eval` and `tabrl train`, its descriptions starting at `column`. */
export function judgeUsage(column: number): string {
  const rows: [string, string[]][] = [
    ['--judge-base-url URL', ['a judge endpoint, lent to loadEnvironment(args) as args.judgeClient (environment', 'files get a stand-in whose calls come back to tabrl: the key stays here)']],
    ['--judge-model NAME', ['the judge\'s model name, passed as args.judgeModel (default "default")']],
    ['--judge-api-key-env VAR', ['read the judge\'s API key from this environment variable']],
  ];
  return rows.map(([flag, [first, ...rest]]) => [`  ${flag}`.padEnd(column - 1) + ` ${first}`, ...rest.map((line) => `${' '.repeat(column)}${line}`)].join('\n')).join('\n');
}
