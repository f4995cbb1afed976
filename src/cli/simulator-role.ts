/**
 * The tool simulator lent to an environment (`--simulator-base-url`, `--simulator-model`,
 * `--simulator-api-key-env` on eval, train, serve and calibrate): a model held by `tabrl` and lent
 * to `loadEnvironment(args)` as `args.simulatorClient` (with `args.simulatorModel`), as the judge is
 * lent as `args.judgeClient`, so an environment with simulated tools can use both a judge and a
 * simulator. `--simulator-model heuristic` lends the offline scripted nearest-record simulator. An
 * environment file's process gets a stand-in whose calls come back here, so the key stays here.
 * This module reads flags and makes the client; it does not load environments.
 */
import { readFileSync } from 'node:fs';
import { readSimulatorRecord, simulatorFlags } from '../envs/studio/index.ts';
import { CliError } from './cli-error.ts';
import { isEnvironmentPath, type LentModel } from './load-environment.ts';
import { createRoleClient, roleOptions, roleSettingsFromFlags, roleUsage, type RoleSettings } from './model-roles.ts';

/** The three `--simulator-*` flags, as parseArgs options. */
export const SIMULATOR_FLAG_OPTIONS = roleOptions(['simulator']);

/** The simulator settings from the flags, or undefined when none of them was given (an endpoint, or `heuristic`). */
export function simulatorSettingsFromFlags(values: { [flag: string]: unknown }): RoleSettings | undefined {
  return roleSettingsFromFlags(values, 'simulator', { allowLocal: false });
}

/**
 * A line for stderr when the environment file `spec` records the tool simulator it was downloaded from
 * the tab with (src/envs/studio/simulator-record.ts) and no `--simulator-*` flag lends one: which
 * flags lend the same. Undefined when flags were given, `spec` is not a file, or it records none.
 */
export function recordedSimulatorNote(spec: string, simulator: RoleSettings | undefined): string | undefined {
  if (simulator !== undefined || !isEnvironmentPath(spec)) return undefined;
  let source: string;
  try {
    source = readFileSync(spec, 'utf8');
  } catch {
    return undefined; // loading the file says what is wrong with it
  }
  const record = readSimulatorRecord(source);
  if (!record) return undefined;
  const flags = simulatorFlags(record);
  const how = flags
    ? `to lend the same, add ${flags}${record.baseURL !== undefined ? ' (and --simulator-api-key-env VAR if it needs a key)' : ''}`
    : 'tabrl cannot lend that model: add --simulator-base-url URL --simulator-model NAME for an endpoint, or --simulator-model heuristic';
  return `${spec} was downloaded from the tab with the tool simulator ${record.label}; no --simulator-* flag was given, so the file's own default answers its tools. ${how}`;
}

/** The lent simulator of `settings` (its key read from the named variable now). */
export async function lendSimulator(settings: RoleSettings, timeoutMs: number): Promise<LentModel> {
  return { client: await createRoleClient('simulator', settings, { timeoutMs }), model: settings.model };
}

/** The simulator settings kept in a run's metadata, checked when read back; throws a `CliError` naming `path` when they are malformed. */
export function checkSimulatorSettings(value: unknown, path: string): RoleSettings | undefined {
  if (value === undefined) return undefined;
  const settings = value as Partial<RoleSettings> | null;
  if (
    typeof settings !== 'object' ||
    settings === null ||
    typeof settings.model !== 'string' ||
    (settings.baseUrl !== undefined && typeof settings.baseUrl !== 'string') ||
    (settings.apiKeyEnv !== undefined && typeof settings.apiKeyEnv !== 'string')
  ) {
    throw new CliError(`${path}: "simulator" should be { baseUrl?, model, apiKeyEnv? }; this folder cannot be resumed (start a new run with --out)`, 2);
  }
  return settings as RoleSettings;
}

/** Simulator usage text shared by eval, train, serve and calibrate, its descriptions starting at `column`. */
export function simulatorUsage(column: number): string {
  return roleUsage(
    ['simulator'],
    column,
    {
      simulator: ['a tool simulator endpoint, lent to loadEnvironment(args) as args.simulatorClient', '(environments with simulated tools, from tabrl simulate or synth --backwards)'],
    },
    { local: false },
    { simulator: ['its model name (args.simulatorModel), or heuristic (the offline scripted', 'nearest-record simulator)'] },
  );
}
