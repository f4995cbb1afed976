/**
 * `tabrl serve <name | path/to/env.ts>`: serves an environment over OpenEnv's protocol (WebSocket
 * sessions at /ws, HTTP at /health, /schema, /metadata, /reset, /step, /state; docs/serve.md), so
 * TRL, verifiers/prime-rl and other trainers play its episodes with their own model. The
 * environment loads as under `tabrl eval` (a file runs in its own locked-down process, with the
 * same limits; a judge given with --judge-* is held here and lent to it), and rewards are the
 * rubric's, as `tabrl eval` scores them. Ctrl-C or SIGTERM drains: requests in progress get a few
 * seconds to finish, the rest fail with EXECUTION_ERROR, sockets close, and it exits 130 or 143.
 */
import { BUILTIN_ENVIRONMENTS } from '../envs/builtin/index.ts';
import { MAX_TIMEOUT_MS } from '../envs/index.ts';
import { CliError } from './cli-error.ts';
import { integerFlag, jsonObjectFlag, numberFlag, parseFlags } from './flags.ts';
import { DEFAULT_TIME_LIMIT_MS } from './isolated-environment.ts';
import { createJudgeClient, judgeSettingsFromFlags, judgeUsage } from './judge.ts';
import { lendSimulator, SIMULATOR_FLAG_OPTIONS, simulatorSettingsFromFlags, simulatorUsage } from './simulator-role.ts';
import { closeEnvironment, isEnvironmentPath, loadEnvironmentSpec } from './load-environment.ts';
import { DEFAULT_MAX_FRAME_BYTES, startServeServer } from './serve/server.ts';
import { ServedEnvironment } from './serve/session.ts';
import { onStopSignal } from './stop-signals.ts';
import { tabrlVersion } from './version.ts';

/** Seconds requests in progress get to finish after Ctrl-C or SIGTERM. */
const DRAIN_GRACE_MS = 5_000;

/** Usage text of `tabrl serve`. */
const SERVE_USAGE = `Usage: tabrl serve <name | path/to/env.ts> [options]

Serves an environment over OpenEnv's protocol, so a trainer outside the tab (TRL's GRPOTrainer,
verifiers/prime-rl, ...) plays its episodes with its own model: one episode at a time per WebSocket
session at ws://HOST:PORT/ws, plus GET /health, /schema, /metadata, /state and the stateless POST
/reset and /step. The final step of an episode carries the rubric's reward, the number tabrl eval
reports. Reference: docs/serve.md. Prints "tabrl serve: listening on http://HOST:PORT ..." when ready.

Options:
  --port N                port to listen on (default 8001; 0 picks a free one)
  --host H                address to listen on (default 127.0.0.1; anything else reaches the network
                          and prints a warning: use --token-env there)
  --max-sessions N        sessions at once, WebSocket sessions and stateless POST /reset or /step
                          requests in progress (default 64); one more gets CAPACITY_REACHED
  --session-timeout S     close a session that sends nothing for S seconds (default: never)
  --token-env VAR         require "Authorization: Bearer <token>" with the token in this environment variable
  --split train|eval      the tasks a reset draws from unless it names a split (default train)
  --env-args JSON         arguments for the environment's loadEnvironment(args)
  --time-limit SECONDS    an environment file's code may run this long without returning, per stretch (default 5)
  --timeout SECONDS       per-request timeout of the judge and the simulator (default 120)
${judgeUsage(26)}
${simulatorUsage(26)}
  --no-typecheck          run an environment file without type-checking it first

An environment file runs in its own process, with no API keys, no file writes, no network and no
child processes, as under tabrl eval; built-in environments run in this process. Frames over
${DEFAULT_MAX_FRAME_BYTES / 2 ** 20} MiB close the session (WebSocket code 1009).`;

/** Runs `tabrl serve` until Ctrl-C or SIGTERM; returns the exit code. */
export async function runServe(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags({
    args: argv,
    allowPositionals: true,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'max-sessions': { type: 'string' },
      'session-timeout': { type: 'string' },
      'token-env': { type: 'string' },
      split: { type: 'string' },
      'env-args': { type: 'string' },
      'time-limit': { type: 'string' },
      timeout: { type: 'string' },
      'judge-base-url': { type: 'string' },
      'judge-model': { type: 'string' },
      'judge-api-key-env': { type: 'string' },
      ...SIMULATOR_FLAG_OPTIONS,
      'no-typecheck': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(SERVE_USAGE);
    return 0;
  }
  const spec = positionals[0];
  if (!spec || positionals.length > 1) throw new CliError(`give exactly one environment (a built-in name or a file path)\n\n${SERVE_USAGE}`, 2);
  const port = integerFlag(values.port, '--port', 8001, 0);
  if (port > 65535) throw new CliError(`--port must be from 0 to 65535, got ${port}`, 2);
  const host = values.host ?? '127.0.0.1';
  const maxSessions = integerFlag(values['max-sessions'], '--max-sessions', 64, 1);
  const sessionTimeoutSeconds = numberFlag(values['session-timeout'], '--session-timeout', undefined, 0.05, 86_400 * 7);
  const split = values.split ?? 'train';
  if (split !== 'train' && split !== 'eval') throw new CliError(`--split must be train or eval, got "${split}"`, 2);
  const token = readToken(values['token-env']);
  const timeLimitMs = (numberFlag(values['time-limit'], '--time-limit', undefined, 0.1, 3600) ?? DEFAULT_TIME_LIMIT_MS / 1000) * 1000;
  const timeoutMs = Math.round((numberFlag(values.timeout, '--timeout', undefined, 0.001, MAX_TIMEOUT_MS / 1000) ?? 120) * 1000);
  const judgeSettings = judgeSettingsFromFlags(values);
  const judge = judgeSettings ? { client: createJudgeClient(judgeSettings, timeoutMs), model: judgeSettings.model } : undefined;
  const simulatorSettings = simulatorSettingsFromFlags(values);
  const simulator = simulatorSettings ? await lendSimulator(simulatorSettings, timeoutMs) : undefined;

  const env = await loadEnvironmentSpec(spec, {
    args: jsonObjectFlag(values['env-args'], '--env-args'),
    typecheck: !values['no-typecheck'],
    isolation: { timeLimitMs },
    ...(judge ? { judge } : {}),
    ...(simulator ? { simulator } : {}),
  });
  const stop = onStopSignal();
  try {
    const served = new ServedEnvironment(env, split);
    if (served.tasks(split).length === 0) throw new CliError(`${env.name} has no ${split} tasks; check --env-args or --split`);
    if (!isLoopback(host))
      console.error(
        `warning: tabrl serve listens on ${host}, reachable from other machines: anyone who reaches it can run episodes${token ? '' : ' (no --token-env: no token is asked)'}; the traffic is not encrypted`,
      );
    const server = await startServeServer({
      served,
      host,
      port,
      maxSessions,
      ...(sessionTimeoutSeconds !== undefined ? { sessionTimeoutMs: sessionTimeoutSeconds * 1000 } : {}),
      ...(token !== undefined ? { token } : {}),
      metadata: {
        name: env.name,
        description: isEnvironmentPath(spec) ? `TabRL environment file ${spec}` : (BUILTIN_ENVIRONMENTS[spec as keyof typeof BUILTIN_ENVIRONMENTS]?.description ?? env.name),
        version: tabrlVersion().tabrl_version,
        readme_content: `${env.name}, served by tabrl serve: reset with {"task_index": i, "split": "train"|"eval"} (or a seed), step with {"message": "<the model's reply>"}; the last step has done: true and the rubric's reward. Reference: docs/serve.md in the TabRL repository.`,
      },
    }).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') throw new CliError(`port ${port} on ${host} is in use; pick another with --port (0 picks a free one)`, 2);
      if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND') throw new CliError(`cannot listen on ${host}: no such address on this machine; check --host`, 2);
      throw error;
    });
    const wsUrl = server.url.replace(/^http/, 'ws');
    console.log(`tabrl serve: listening on ${server.url} (${wsUrl}/ws)`);
    console.error(
      `${env.name}: ${served.tasks('train').length} train and ${served.tasks('eval').length} eval tasks, up to ${maxSessions} sessions${token ? ', bearer token required' : ''}. Ctrl-C stops.`,
    );
    await new Promise<void>((resolve) => stop.signal.addEventListener('abort', () => resolve(), { once: true }));
    console.error(`tabrl serve: ${stop.received ?? 'stop'} received; finishing ${server.activeSessions} open session(s) (at most ${DRAIN_GRACE_MS / 1000} s)`);
    await server.close(DRAIN_GRACE_MS);
    return stop.exitCode;
  } finally {
    stop.dispose();
    closeEnvironment(env);
  }
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

function readToken(variable: string | undefined): string | undefined {
  if (variable === undefined) return undefined;
  const token = process.env[variable];
  if (!token) throw new CliError(`--token-env ${variable}: the environment variable ${variable} is not set (or empty)`, 2);
  return token;
}
