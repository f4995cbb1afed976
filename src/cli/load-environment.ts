/**
 * Finds an environment for the CLI: a built-in by name, or a TypeScript/JavaScript file by path
 * (type-checked, then bundled and imported; its `import ... from 'tabrl'` resolves to this library).
 * Every failure is a `CliError` saying what was wrong and what to do.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { BUILTIN_ENVIRONMENTS, loadBuiltinEnvironment } from '../envs/builtin/index.ts';
import type { Environment } from '../envs/index.ts';
import { CliError } from './cli-error.ts';
import { importEnvironmentFile } from './compile-env-file.ts';
import { typecheckEnvironmentFile } from './typecheck-env.ts';

/** How to load an environment. */
export interface LoadEnvironmentOptions {
  /** Arguments passed to the environment's `loadEnvironment(args)`. */
  args?: Record<string, unknown>;
  /** Type-check a file before importing it (default true). */
  typecheck?: boolean;
}

/** True when `spec` names a file rather than a built-in environment. */
export function isEnvironmentPath(spec: string): boolean {
  return /[\\/]/.test(spec) || /\.(m?[jt]s)$/.test(spec);
}

/** Loads a built-in environment by name or an environment file by path. */
export async function loadEnvironmentSpec(spec: string, options: LoadEnvironmentOptions = {}): Promise<Environment> {
  const args = options.args ?? {};
  if (!isEnvironmentPath(spec)) {
    if (!(spec in BUILTIN_ENVIRONMENTS)) {
      throw new CliError(`unknown environment "${spec}". Built-in environments: ${Object.keys(BUILTIN_ENVIRONMENTS).join(', ')}; or give a path to an environment file (./my-env.ts).`);
    }
    return loadBuiltinEnvironment(spec, args);
  }
  return loadEnvironmentFile(resolve(spec), args, options.typecheck ?? true);
}

async function loadEnvironmentFile(path: string, args: Record<string, unknown>, typecheck: boolean): Promise<Environment> {
  if (!existsSync(path)) throw new CliError(`environment file ${path} does not exist`);
  if (typecheck && /\.m?ts$/.test(path)) {
    const errors = typecheckEnvironmentFile(path);
    if (errors.length > 0) {
      throw new CliError(`${path} does not compile:\n${errors.slice(0, 20).join('\n')}${errors.length > 20 ? `\n… and ${errors.length - 20} more` : ''}\n(fix the errors, or pass --no-typecheck to run it anyway)`);
    }
  }
  let module: Record<string, unknown>;
  try {
    module = await importEnvironmentFile(path);
  } catch (error) {
    throw new CliError(`could not load ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (typeof module.default !== 'function') {
    throw new CliError(`${path} has no default export; an environment file ends with \`export default function loadEnvironment(args) { ... }\``);
  }
  let environment: unknown;
  try {
    environment = await (module.default as (args: Record<string, unknown>) => unknown)(args);
  } catch (error) {
    throw new CliError(`${path}: loadEnvironment(${JSON.stringify(args)}) threw: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!isEnvironment(environment)) {
    throw new CliError(`${path}: loadEnvironment() must return an environment (a SingleTurnEnv, MultiTurnEnv, ToolEnv, ...), got ${describeValue(environment)}`);
  }
  return environment;
}

function isEnvironment(value: unknown): value is Environment {
  const candidate = value as Partial<Environment> | null;
  return typeof candidate === 'object' && candidate !== null && typeof candidate.rollout === 'function' && Array.isArray(candidate.dataset);
}

function describeValue(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'object') return `an object with keys ${Object.keys(value).slice(0, 5).join(', ') || '(none)'}`;
  return typeof value;
}
