/**
 * The side of an environment file's process that runs INSIDE its QuickJS engine, together with the
 * environment library (src/envs) and the environment's bundled code: it loads the environment,
 * runs rollouts and group scoring, and turns model calls into messages — the counterpart of the
 * browser sandbox's runtime (src/workers/sandbox/runtime.ts). Loading, the description, rollouts,
 * group scoring and the relayed client are the isolation layer's (src/isolation), the same code the
 * browser sandbox runs; this file adds the engine's messages, call ids and size limits. It talks only through the functions
 * the engine's host (isolated-env-child.ts) lends it as `__tabrlHost`, taken here and removed from
 * the global scope before environment code runs: JSON strings out, JSON strings in, one-shot timers
 * and a line of output. Nothing here can reach a file, a socket, a process or a key, because the
 * engine has none; messages it sends are checked again on the Node side and by `tabrl` itself.
 *
 * It keeps no clock: the host times every stretch of code and interrupts the engine.
 */
import * as tabrl from '../envs/index.ts';
import * as tabrlStudio from '../envs/studio/index.ts';
import { toPlainData, type ChatClient, type Environment, type Task } from '../envs/index.ts';
import { errorMessage } from '../common/error-message.ts';
import type { ChildMessage, CompletionOutcome, EnvironmentSetup, HostMessage, ModelCallClient } from '../isolation/protocol.ts';
import { relayedClient } from '../isolation/relay.ts';
import { describeEnvironment } from '../isolation/environment-info.ts';
import { describeValue, loadEnvironmentModule, moduleExports, moduleRequire, type ModuleFactory } from '../isolation/environment-module.ts';
import { runRollout, scoreGroupOf, taskOf } from '../isolation/hosted-rollout.ts';
import { oversizedTrajectory } from '../isolation/failure-records.ts';
import { installShims } from './quickjs-shims.ts';

/** What the engine's host lends this code, under `globalThis.__tabrlHost`. */
interface GuestHost {
  /** One ChildMessage as JSON, to `tabrl`. */
  send(json: string): void;
  setTimer(id: number, ms: number): void;
  clearTimer(id: number): void;
  log(text: string): void;
  /** The rollout whose work the host is running now (-1: none), for the judge's calls. */
  currentRollout(): number;
}

/** What this code offers the host, as `globalThis.__tabrlGuest`. */
interface GuestApi {
  /** Loads the environment: `factory` is the bundled file as `(module, exports, require) => void`; `json` the load message without its code. */
  load(factory: unknown, json: string): void;
  /** One HostMessage as JSON (rollout, score-group, completion, abort). */
  receive(json: string): void;
  fireTimer(id: number): void;
}

const globals = globalThis as Record<string, unknown>;
const host = globals.__tabrlHost as GuestHost;
delete globals.__tabrlHost;
const sendJson = host.send;
// Taken before environment code runs, which may replace them for itself.
const stringify = JSON.stringify;
const parse = JSON.parse;
const currentRollout = host.currentRollout;
const fireTimer = installShims(host);

let environment: Environment | undefined;
let maxMessageBytes = Infinity;
const pendingCalls = new Map<number, (outcome: CompletionOutcome) => void>();
const rolloutSignals = new Map<number, AbortController>();
let nextCallId = 0;

function send(message: ChildMessage): void {
  sendJson(stringify(message));
}

/** Throws when `value` would be a message larger than the host accepts. */
function checkSize(value: unknown, what: string): void {
  const bytes = stringify(value)?.length ?? 0;
  if (bytes > maxMessageBytes) throw new Error(`${what} is ${(bytes / 2 ** 20).toFixed(1)} MiB, over the ${(maxMessageBytes / 2 ** 20).toFixed(0)} MiB a rollout may send to tabrl`);
}

const requireModule = moduleRequire(
  new Map<string, unknown>([
    ['tabrl', tabrl],
    ['tabrl/studio', tabrlStudio],
  ]),
  "in an environment file run by tabrl: environment code runs isolated (no file system, network or processes) and imports only from 'tabrl', 'tabrl/studio', 'tabrl/builtin/...' and its own files",
);

/** A chat client whose calls cross to the host; `rolloutId` undefined means the rollout the host runs now (a judge). */
function createHostClient(client: ModelCallClient, rolloutId?: number): ChatClient {
  return relayedClient((request) => {
    checkSize(request.messages, 'the conversation sent to the model');
    const callId = nextCallId++;
    const owner = rolloutId ?? currentRollout();
    return new Promise<CompletionOutcome>((resolve) => {
      pendingCalls.set(callId, resolve);
      send({ type: 'create-completion', callId, rolloutId: owner, client, request: toPlainData(request) as typeof request });
    });
  });
}

async function load(factory: unknown, message: Omit<Extract<HostMessage, { type: 'load' }>, 'code'>): Promise<void> {
  maxMessageBytes = message.maxMessageBytes;
  const exports = moduleExports(factory as ModuleFactory, requireModule);
  const loaded = await loadEnvironmentModule(exports, message.args, {
    ...(message.judge ? { judgeClient: createHostClient('judge') } : {}),
    ...(message.simulator ? { simulatorClient: createHostClient('simulator') } : {}),
  });
  const env = loaded.environment;
  const info = describeEnvironment(env, loaded.unusedArgWarnings);
  const dataset = toPlainData(env.dataset) as Task[];
  const evalDataset = optionalTasks(env.evalDataset, 'evalDataset');
  // Sent only when the environment sets its own demonstration tasks; warm-up falls back to `dataset` otherwise.
  const demonstrationDataset = optionalTasks(env.demonstrationDataset, 'demonstrationDataset');
  checkSize([dataset, evalDataset, demonstrationDataset], 'the dataset');
  environment = env;
  const setup: EnvironmentSetup = {
    ...(env.systemPrompt !== undefined ? { systemPrompt: env.systemPrompt } : {}),
    fewShot: toPlainData(env.fewShot) as tabrl.Message[],
    samplingArgs: toPlainData(env.samplingArgs) as tabrl.SamplingArgs,
  };
  send({ type: 'loaded', info, setup, dataset, evalDataset, demonstrationDataset });
}

/** An optional split of the environment as data: null when unset, an error naming it when it is not an array. */
function optionalTasks(tasks: unknown, name: string): Task[] | null {
  if (tasks === undefined || tasks === null) return null;
  if (!Array.isArray(tasks)) throw new Error(`the environment's ${name} must be an array of tasks, got ${describeValue(tasks)}`);
  return toPlainData(tasks) as Task[];
}

async function rollout(message: Extract<HostMessage, { type: 'rollout' }>): Promise<void> {
  const env = environment;
  const { rolloutId } = message;
  try {
    if (!env) throw new Error('no environment is loaded');
    const task = taskOf(env, message.task);
    const controller = new AbortController();
    rolloutSignals.set(rolloutId, controller);
    const plain = await runRollout(env, task, createHostClient('policy', rolloutId), message.samplingArgs, {
      ...(message.model !== undefined ? { model: message.model } : {}),
      signal: controller.signal,
      ...(message.taskIndex !== undefined ? { taskIndex: message.taskIndex } : {}),
    });
    try {
      // Serialised once: the size check and the message are the same text (QuickJS is slow on large strings).
      const json = stringify({ type: 'rollout-done', rolloutId, trajectory: plain });
      if (json.length > maxMessageBytes)
        throw new Error(`the rollout is ${(json.length / 2 ** 20).toFixed(1)} MiB, over the ${(maxMessageBytes / 2 ** 20).toFixed(0)} MiB a rollout may send to tabrl`);
      sendJson(json);
    } catch (error) {
      // Keep the verdict; drop the transcript and state that are too large to keep.
      send({ type: 'rollout-done', rolloutId, trajectory: oversizedTrajectory(plain, `${env.name}.rollout`, errorMessage(error)) });
    }
  } catch (error) {
    send({ type: 'rollout-failed', rolloutId, message: errorMessage(error) });
  } finally {
    rolloutSignals.delete(rolloutId);
  }
}

/** Runs the group reward functions on one task's finished rollouts and sends their verdicts back: what each added to the rollout. */
async function scoreGroup(message: Extract<HostMessage, { type: 'score-group' }>): Promise<void> {
  const env = environment;
  const { rolloutId } = message;
  try {
    if (!env) throw new Error('no environment is loaded');
    const scored = await scoreGroupOf(env, message.group);
    const names = env.rubric.groupRewards.map((reward) => reward.name);
    const verdicts = scored.map((trajectory, i) => {
      const before = message.group[i]!;
      return {
        reward: trajectory.reward - before.reward,
        scores: Object.fromEntries(names.map((name) => [name, trajectory.scores[name] ?? 0])),
        errors: trajectory.errors.slice(before.errors.length),
      };
    });
    send({ type: 'group-scored', rolloutId, verdicts: toPlainData(verdicts) as typeof verdicts, passed: scored.map((trajectory) => trajectory.passed) });
  } catch (error) {
    send({ type: 'rollout-failed', rolloutId, message: errorMessage(error) });
  }
}

const api: GuestApi = {
  load(factory, json) {
    load(factory, parse(json) as Omit<Extract<HostMessage, { type: 'load' }>, 'code'>).catch((error: unknown) => send({ type: 'load-failed', message: errorMessage(error) }));
  },
  receive(json) {
    const message = parse(json) as HostMessage;
    if (message.type === 'rollout') void rollout(message);
    else if (message.type === 'score-group') void scoreGroup(message);
    else if (message.type === 'completion') {
      pendingCalls.get(message.callId)?.(message.outcome);
      pendingCalls.delete(message.callId);
    } else if (message.type === 'abort') rolloutSignals.get(message.rolloutId)?.abort();
  },
  fireTimer,
};
globals.__tabrlGuest = api;
