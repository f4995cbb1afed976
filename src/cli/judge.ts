/**
 * A judge model for the CLI (`--judge-base-url`, `--judge-model`, `--judge-api-key-env`, read by
 * src/cli/model-roles.ts like every model role): an OpenAI-compatible client held by `tabrl` and
 * lent to the environment's `loadEnvironment(args)` as `args.judgeClient` (with `args.judgeModel`).
 * An environment file's process gets a stand-in whose calls come back here, so the judge's key
 * never reaches environment code.
 */
import type { ChatClient } from '../envs/index.ts';
import { createEndpointClient, roleSettingsFromFlags, roleUsage } from './model-roles.ts';

/** Where the judge is; kept in a run's metadata (never the key itself, only the variable that holds it). */
export interface JudgeSettings {
  baseUrl: string;
  model: string;
  apiKeyEnv?: string;
}

/** The judge settings from the flags, or undefined when no judge was asked for (an endpoint: the judge is lent to environment code). */
export function judgeSettingsFromFlags(values: { 'judge-base-url'?: string; 'judge-model'?: string; 'judge-api-key-env'?: string }): JudgeSettings | undefined {
  const settings = roleSettingsFromFlags(values, 'judge', { allowLocal: false, allowHeuristic: false });
  return settings ? { baseUrl: settings.baseUrl!, model: settings.model, ...(settings.apiKeyEnv !== undefined ? { apiKeyEnv: settings.apiKeyEnv } : {}) } : undefined;
}

/** The judge's client, reading its key from the named variable now. */
export function createJudgeClient(settings: JudgeSettings, timeoutMs: number): ChatClient {
  return createEndpointClient('judge', settings, { timeoutMs });
}

/** Judge usage text shared by `tabrl eval` and `tabrl train`, its descriptions starting at `column`. */
export function judgeUsage(column: number): string {
  return roleUsage(
    ['judge'],
    column,
    {
      judge: [
        'a judge endpoint, lent to loadEnvironment(args) as args.judgeClient (environment',
        'files get a stand-in whose calls come back to tabrl: the key stays here); a judge that',
        'is unreachable or refuses stops the run',
      ],
    },
    { local: false, heuristic: false },
    { judge: ['the judge\'s model name, passed as args.judgeModel (default "default")'] },
  );
}
