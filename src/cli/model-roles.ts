/**
 * Model roles on the command line: every command that talks to models names each role's model with
 * the same three flags — `--<role>-base-url URL`, `--<role>-model NAME` (or `local:<tiny | dir>`,
 * run in this process, or `heuristic`, the offline rule-based stand-in for generator, solver and
 * judge; for the simulator, the scripted nearest-record simulator) and `--<role>-api-key-env VAR` — for the roles generator, solver, judge, policy and simulator. This module parses them, checks them with one-line errors, builds the clients and writes
 * the usage lines, so every command (and the judge of `tabrl eval`/`train`) reads them alike.
 */
import { ChatClientError, OpenAIHttpClient, type ChatClient } from '../envs/index.ts';
import { HeuristicAttackerClient, HeuristicStudioClient, ScriptedSimulatorClient } from '../envs/studio/index.ts';
import { LocalChatClient } from '../gpu/inference/local-chat-client.ts';
import { CliError } from './cli-error.ts';
import { lettingEventsRun } from './let-events-run.ts';
import { openModel, parseBackendName } from './open-model.ts';

/** The model roles a command can take. */
export type ModelRole = 'generator' | 'solver' | 'judge' | 'policy' | 'attacker' | 'reviewer' | 'simulator';

/** Where a role's model is; kept in reports (never the key, only the variable that holds it). */
export interface RoleSettings {
  /** The endpoint; absent for a `local:` model. */
  baseUrl?: string;
  /** The model name sent to the endpoint, `local:<tiny | dir>`, or `heuristic` (no endpoint). */
  model: string;
  apiKeyEnv?: string;
}

/** The three flags of the roles `R`, as parseArgs options. */
export type RoleFlagOptions<R extends ModelRole> = { [Flag in `${R}-base-url` | `${R}-model` | `${R}-api-key-env`]: { type: 'string' } };

/** The parseArgs option table for `roles` (three string flags each). */
export function roleOptions<R extends ModelRole>(roles: readonly R[]): RoleFlagOptions<R> {
  return Object.fromEntries(roles.flatMap((role) => [`${role}-base-url`, `${role}-model`, `${role}-api-key-env`].map((flag) => [flag, { type: 'string' as const }]))) as RoleFlagOptions<R>;
}

/** Options of `roleSettingsFromFlags`. */
export interface RoleSettingsOptions {
  /** The role must be given (default false: undefined when none of its flags is). */
  required?: boolean;
  /** Whether `--<role>-model local:...` is allowed (default true). */
  allowLocal?: boolean;
  /** Whether `--<role>-model heuristic` is allowed (default true for every role but the policy). */
  allowHeuristic?: boolean;
  /** Extra words for the "is required" message, e.g. "(the model that writes questions)". */
  purpose?: string;
}

/** The settings of `role` from parsed flags; undefined when the role was not given and is optional. */
export function roleSettingsFromFlags(values: { [flag: string]: unknown }, role: ModelRole, options: RoleSettingsOptions = {}): RoleSettings | undefined {
  const text = (flag: string) => (typeof values[flag] === 'string' ? (values[flag] as string) : undefined);
  const baseUrl = text(`${role}-base-url`);
  const model = text(`${role}-model`);
  const apiKeyEnv = text(`${role}-api-key-env`);
  const allowLocal = options.allowLocal ?? true;
  if (baseUrl === undefined && model === undefined) {
    if (apiKeyEnv !== undefined) throw new CliError(`--${role}-api-key-env needs --${role}-base-url (the ${role} endpoint, e.g. http://localhost:8000/v1)`, 2);
    if (options.required)
      throw new CliError(
        `--${role}-model is required${options.purpose ? ` ${options.purpose}` : ''}: give --${role}-base-url URL --${role}-model NAME${allowLocal ? `, or --${role}-model local:tiny` : ''}`,
        2,
      );
    return undefined;
  }
  if (model === HEURISTIC_MODEL) {
    if (role === 'policy' || !(options.allowHeuristic ?? true))
      throw new CliError(`--${role}-model heuristic: the offline heuristic plays only the studio's generator, solver, judge, attacker, reviewer and simulator`, 2);
    if (baseUrl !== undefined) throw new CliError(`--${role}-model heuristic runs in this process; leave out --${role}-base-url`, 2);
    return { model };
  }
  if (model?.startsWith('local:')) {
    if (!allowLocal) throw new CliError(`--${role}-model ${model}: a local model cannot play the ${role} here; give --${role}-base-url URL --${role}-model NAME`, 2);
    if (model === 'local:') throw new CliError(`--${role}-model local: needs a model after the colon (local:tiny or local:<model-dir>)`, 2);
    if (baseUrl !== undefined) throw new CliError(`--${role}-model ${model} runs in this process; leave out --${role}-base-url`, 2);
    return { model, ...(apiKeyEnv !== undefined ? { apiKeyEnv } : {}) };
  }
  if (baseUrl === undefined)
    throw new CliError(`--${role}-model ${model} needs --${role}-base-url (the ${role} endpoint, e.g. http://localhost:8000/v1)${allowLocal ? `, or use --${role}-model local:tiny` : ''}`, 2);
  return { baseUrl, model: model ?? 'default', ...(apiKeyEnv !== undefined ? { apiKeyEnv } : {}) };
}

/** How role clients are made. */
export interface RoleClientOptions {
  /** Per-request timeout of an endpoint (default 120 s). */
  timeoutMs?: number;
  /** Retries after a 429, 5xx or timeout (default 3). */
  maxRetries?: number;
  /** For local: models, cpu (default) or webgpu. */
  backend?: string;
  seed?: number;
}

/** The endpoint client of a role (reading its key from the named variable now); throws a `CliError` for a bad URL or a missing key. */
export function createEndpointClient(role: ModelRole, settings: RoleSettings, options: RoleClientOptions = {}): ChatClient {
  if (settings.baseUrl === undefined) throw new CliError(`the ${role} has no --${role}-base-url`, 2);
  let apiKey: string | undefined;
  if (settings.apiKeyEnv !== undefined) {
    apiKey = process.env[settings.apiKeyEnv];
    if (!apiKey) throw new CliError(`--${role}-api-key-env ${settings.apiKeyEnv}: the environment variable ${settings.apiKeyEnv} is not set`, 2);
  }
  try {
    return new OpenAIHttpClient({ baseURL: settings.baseUrl, apiKey, timeoutMs: options.timeoutMs ?? 120_000, ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}) });
  } catch (error) {
    if (error instanceof ChatClientError) throw new CliError(`--${role}-base-url ${settings.baseUrl}: ${error.message}`, 2);
    throw error;
  }
}

/** The model name that selects the offline heuristic client of a studio role. */
const HEURISTIC_MODEL = 'heuristic';

/** The client of a role: an endpoint, a `local:` model opened in this process, or the offline heuristic. */
export async function createRoleClient(role: ModelRole, settings: RoleSettings, options: RoleClientOptions = {}): Promise<ChatClient> {
  if (settings.model === HEURISTIC_MODEL && role !== 'policy') {
    if (role === 'attacker') return new HeuristicAttackerClient(options.seed ?? 0);
    if (role === 'simulator') return new ScriptedSimulatorClient();
    return new HeuristicStudioClient(role === 'reviewer' ? 'judge' : role);
  }
  if (!settings.model.startsWith('local:')) return createEndpointClient(role, settings, options);
  const model = await openModel(settings.model.slice('local:'.length), { backend: parseBackendName(options.backend), seed: options.seed ?? 0 });
  // Ctrl-C must reach its handler between completions decoded on the CPU.
  return lettingEventsRun(new LocalChatClient({ backend: model.backend, tokenizer: model.tokenizer, model: settings.model, ...(model.createDecoder ? { createDecoder: model.createDecoder } : {}) }));
}

/** What each role does, for usage text. */
const ROLE_PURPOSE: Record<ModelRole, string> = {
  generator: 'the model that proposes tasks',
  solver: 'the model that answers them to verify them',
  judge: 'the model that judges answers',
  policy: 'the model being calibrated or trained',
  attacker: 'the model that searches for replies the reward pays without the task done',
  reviewer: 'the model that says in hindsight whether a high reward was earned',
  simulator: 'the model that simulates tools',
};

/** Usage lines of `roles`' flags, descriptions starting at `column`; `describe` and `modelLines` override a role's base-url and model lines, `kinds` says which non-endpoint models the command takes. */
export function roleUsage(
  roles: readonly ModelRole[],
  column: number,
  describe: Partial<Record<ModelRole, string[]>> = {},
  kinds: { local?: boolean; heuristic?: boolean } = {},
  modelLines: Partial<Record<ModelRole, string[]>> = {},
): string {
  const { local = true, heuristic = true } = kinds;
  const alternatives = (role: ModelRole) => [local ? 'local:tiny / local:<model-dir>' : '', heuristic && role !== 'policy' ? 'heuristic (offline rules)' : ''].filter((text) => text !== '');
  const rows: [string, string[]][] = roles.flatMap(
    (role) =>
      [
        [`--${role}-base-url URL`, describe[role] ?? [`endpoint of ${ROLE_PURPOSE[role]}`]],
        [`--${role}-model NAME`, modelLines[role] ?? [`its model name${alternatives(role).length > 0 ? `, or ${alternatives(role).join(', or ')}` : ''}`]],
        [`--${role}-api-key-env VAR`, [`read its API key from this environment variable`]],
      ] as [string, string[]][],
  );
  return rows.map(([flag, [first, ...rest]]) => [`  ${flag}`.padEnd(column - 1) + ` ${first}`, ...rest.map((line) => `${' '.repeat(column)}${line}`)].join('\n')).join('\n');
}
