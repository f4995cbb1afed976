/**
 * Finds an environment for the CLI: a built-in by name (run in this process: it is part of TabRL),
 * or a TypeScript/JavaScript file by path — type-checked and bundled in a process without the host's
 * environment (src/cli/env-compile-process.ts), and run in its own locked-down
 * process (src/cli/isolated-environment.ts), its `import ... from 'tabrl'` resolving to this library
 * and 'tabrl/builtin/<module>' to that built-in module, as in the playground (src/cli/env-modules.ts).
 * Every failure is a `CliError` saying what was wrong and what to do.
 */
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { BUILTIN_ENVIRONMENTS, loadBuiltinEnvironment } from '../envs/builtin/index.ts';
import type { ChatClient, Environment } from '../envs/index.ts';
import { CliError } from './cli-error.ts';
import { closestName } from '../common/closest-name.ts';
import { watchEnvArgs } from '../common/unused-env-args.ts';
import { EnvFileCompileError } from './compile-env-file.ts';
import { IsolatedEnvironment, IsolatedLoadError, loadIsolatedEnvironment, type IsolationOptions } from './isolated-environment.ts';
import { compileEnvironmentInChild } from './env-compile-process.ts';
import { errorMessage } from '../common/error-message.ts';

/** How to load an environment. */
export interface LoadEnvironmentOptions {
  /** Arguments passed to the environment's `loadEnvironment(args)`. */
  args?: Record<string, unknown>;
  /** Type-check a file before running it (default true). */
  typecheck?: boolean;
  /** Time limits and memory cap of an environment file's process. */
  isolation?: Omit<IsolationOptions, 'judgeClient' | 'judgeModel' | 'simulatorClient' | 'simulatorModel'>;
  /** A judge lent to `loadEnvironment` as `args.judgeClient`, with `args.judgeModel`. */
  judge?: LentModel;
  /** A tool simulator lent to `loadEnvironment` as `args.simulatorClient`, with `args.simulatorModel`. */
  simulator?: LentModel;
}

/** A model tabrl holds and lends to environment code: its client and the model name its calls use. */
export interface LentModel {
  client: ChatClient;
  model: string;
}

/** True when `spec` names a file rather than a built-in environment. */
export function isEnvironmentPath(spec: string): boolean {
  return /[\\/]/.test(spec) || /\.(m?[jt]s)$/.test(spec);
}

/** Loads a built-in environment by name or an environment file by path. */
export async function loadEnvironmentSpec(spec: string, options: LoadEnvironmentOptions = {}): Promise<Environment> {
  const args = { ...options.args, ...(options.judge ? { judgeModel: options.judge.model } : {}), ...(options.simulator ? { simulatorModel: options.simulator.model } : {}) };
  if (!isEnvironmentPath(spec)) {
    if (!(spec in BUILTIN_ENVIRONMENTS)) {
      const guess = closestName(spec, Object.keys(BUILTIN_ENVIRONMENTS));
      throw new CliError(
        `unknown environment "${spec}"${guess ? `; did you mean "${guess}"?` : '.'} Built-in environments: ${Object.keys(BUILTIN_ENVIRONMENTS).join(', ')}; or give a path to an environment file (./my-env.ts).`,
        2,
      );
    }
    const lent = { ...(options.judge ? { judgeClient: options.judge.client } : {}), ...(options.simulator ? { simulatorClient: options.simulator.client } : {}) };
    const watched = watchEnvArgs({ ...args, ...lent }, ['judgeClient', 'judgeModel', 'simulatorClient', 'simulatorModel']);
    let env: Environment;
    try {
      env = await loadBuiltinEnvironment(spec, watched.args);
    } catch (error) {
      // A built-in's own messages name it and the argument ("wordle: numTasks must be …"): say it once.
      const message = errorMessage(error);
      throw new CliError(`${message.startsWith(`${spec}:`) ? message : `${spec}: ${message}`}; check --env-args`, 2);
    }
    for (const warning of watched.unusedWarnings()) console.error(`warning: ${spec}: ${warning}`);
    return env;
  }
  return loadEnvironmentFile(resolve(spec), args, options);
}

/** Ends an environment file's process; nothing to do for a built-in. */
export function closeEnvironment(env: Environment): void {
  if (env instanceof IsolatedEnvironment) env.close();
}

async function loadEnvironmentFile(path: string, args: Record<string, unknown>, options: LoadEnvironmentOptions): Promise<Environment> {
  if (!existsSync(path)) throw new CliError(`environment file ${path} does not exist`, 2);
  if (!statSync(path).isFile()) throw new CliError(`${path} is not a file; give the path of an environment file (./my-env.ts)`, 2);
  try {
    // Type-checked and bundled in a process with an empty environment (env-compile-process.ts), then run in the isolated child.
    const compiled = await compileEnvironmentInChild(path, { typecheck: (options.typecheck ?? true) && /\.m?ts$/.test(path) });
    const errors = compiled.diagnostics;
    if (errors.length > 0) {
      throw new CliError(
        `${path} does not compile:\n${errors.slice(0, 20).join('\n')}${errors.length > 20 ? `\n… and ${errors.length - 20} more` : ''}\n(fix the errors, or pass --no-typecheck to run it anyway)`,
      );
    }
    return await loadIsolatedEnvironment(
      path,
      args,
      {
        ...options.isolation,
        ...(options.judge ? { judgeClient: options.judge.client, judgeModel: options.judge.model } : {}),
        ...(options.simulator ? { simulatorClient: options.simulator.client, simulatorModel: options.simulator.model } : {}),
      },
      compiled.bundle,
    );
  } catch (error) {
    if (error instanceof EnvFileCompileError) throw new CliError(`could not load ${path}: ${error.message}`);
    if (error instanceof IsolatedLoadError) throw new CliError(`${path}: ${error.message}`);
    throw error;
  }
}
