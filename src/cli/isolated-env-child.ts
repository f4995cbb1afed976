/**
 * The child process that runs an environment file for `tabrl eval` and `tabrl train`, the CLI's
 * counterpart of the browser sandbox's worker (src/workers/sandbox/runtime.ts). src/cli/
 * isolated-environment.ts bundles this file with src/envs into one script and starts it under
 * Node's permission model (read access to its own two files only: no file writes, no child
 * processes, no workers, no native addons), with an empty environment (no API keys) and a heap cap.
 *
 * Here the environment module runs as CommonJS text whose `require` knows only 'tabrl' (the
 * built-in modules it imports as 'tabrl/builtin/...' are bundled into that text); dynamic
 * `import()` is refused (a script without an import callback), and `fetch` and `process.exit` are
 * taken away. Model calls cross to the host, which holds the policy, any judge and their keys.
 * It is not the place for time limits: a child stuck in a loop cannot time itself, so the host
 * watches it and kills it.
 */
import { AsyncLocalStorage, createHook } from 'node:async_hooks';
import vm from 'node:vm';
import * as tabrl from '../envs/index.ts';
import { ChatClientError, type ChatClient, type ChatRequest, type Environment, type Task } from '../envs/index.ts';
import { toPlainData } from '../envs/plain-data.ts';
import type { ChildMessage, CompletionOutcome, EnvironmentInfo, EnvironmentSetup, HostMessage, ModelCallClient, SandboxTrajectory } from './isolated-env-protocol.ts';
import { errorMessage } from '../common/error-message.ts';
import { ANSWER_PLACEHOLDER } from '../workers/sandbox/protocol.ts';

// Taken before any environment code runs, which may replace what it can reach.
const sendToHost: (message: ChildMessage) => void = process.send!.bind(process);
const exitProcess = (process as unknown as { reallyExit(code: number): never }).reallyExit.bind(process);


/** What environment code may not do here, beyond what the permission model refuses. */
function lockDown(): void {
  const refuse = (what: string) => () => {
    throw Object.assign(new Error(`environment code may not ${what}: it runs in an isolated process that tabrl manages (throw an error instead)`), { code: 'ERR_ACCESS_DENIED' });
  };
  process.exit = refuse('end the process (process.exit)');
  (process as unknown as { reallyExit: () => never }).reallyExit = refuse('end the process (process.reallyExit)');
  process.abort = refuse('end the process (process.abort)');
  process.kill = refuse('send signals (process.kill)');
  // The ways to Node's modules and native bindings without an import (net, os.setPriority, signals to any pid).
  const processInternals = process as unknown as Record<string, unknown>;
  for (const name of ['getBuiltinModule', '_kill', 'binding', '_linkedBinding', 'dlopen', 'setuid', 'setgid', 'seteuid', 'setegid', 'setgroups', 'initgroups', 'chdir', 'umask']) {
    if (name in processInternals) processInternals[name] = refuse(`use process.${name}`);
  }
  for (const name of ['fetch', 'WebSocket', 'EventSource'] as const) delete (globalThis as Record<string, unknown>)[name];
  // An error thrown later by a timer of the environment's is its bug, not a reason to end the process.
  process.on('uncaughtException', (error) => console.error(`environment code threw outside a call: ${errorMessage(error)}`));
  process.on('unhandledRejection', (error) => console.error(`environment code left a promise rejected: ${errorMessage(error)}`));
}

function requireModule(name: string): unknown {
  if (name === 'tabrl') return tabrl;
  throw new Error(`cannot import "${name}" in an environment file run by tabrl: environment code runs isolated (no file system, network or processes) and imports only from 'tabrl', 'tabrl/builtin/...' and its own files`);
}

/** Runs the bundled CommonJS text and returns its exports. */
function runModule(code: string, filename: string): Record<string, unknown> {
  const module = { exports: {} as Record<string, unknown> };
  // No importModuleDynamically: every import() in this code (eval and Function included) is refused.
  const factory = new vm.Script(`(function (module, exports, require) {${code}\n})`, { filename }).runInThisContext() as (
    module: { exports: Record<string, unknown> },
    exports: Record<string, unknown>,
    require: (name: string) => unknown,
  ) => void;
  factory(module, module.exports, requireModule);
  return module.exports;
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

let environment: Environment | undefined;
let maxMessageBytes = Infinity;
const currentRollout = new AsyncLocalStorage<number>();
const pendingCalls = new Map<number, (outcome: CompletionOutcome) => void>();
const rolloutSignals = new Map<number, AbortController>();
let nextCallId = 0;

/** Throws when `value` would be a message larger than the host accepts. */
function checkSize(value: unknown, what: string): void {
  const bytes = JSON.stringify(value)?.length ?? 0;
  if (bytes > maxMessageBytes) throw new Error(`${what} is ${(bytes / 2 ** 20).toFixed(1)} MiB, over the ${(maxMessageBytes / 2 ** 20).toFixed(0)} MiB a rollout may send to tabrl`);
}

/** A chat client whose calls cross to the host; `rolloutId` undefined means the rollout whose code is running (a judge). */
function createHostClient(client: ModelCallClient, rolloutId?: number): ChatClient {
  return {
    chat: {
      completions: {
        async create(request: ChatRequest) {
          const { signal, ...plain } = request;
          if (signal?.aborted) throw new ChatClientError('the request was cancelled', 'aborted');
          checkSize(plain.messages, 'the conversation sent to the model');
          const callId = nextCallId++;
          const owner = rolloutId ?? currentRollout.getStore() ?? -1;
          const outcome = await new Promise<CompletionOutcome>((resolve) => {
            pendingCalls.set(callId, resolve);
            sendToHost({ type: 'create-completion', callId, rolloutId: owner, client, request: toPlainData(plain) as typeof plain });
          });
          if (owner >= 0) sendToHost({ type: 'entered', rolloutId: owner });
          if (outcome.ok) return outcome.completion;
          throw new ChatClientError(outcome.message, outcome.kind, outcome.status);
        },
      },
    },
  };
}

async function load(message: Extract<HostMessage, { type: 'load' }>): Promise<void> {
  maxMessageBytes = message.maxMessageBytes;
  lockDown();
  const exports = runModule(message.code, message.filename);
  if (typeof exports.default !== 'function') {
    throw new Error('the environment file has no default export; it ends with `export default function loadEnvironment(args) { ... }`');
  }
  const args = message.judge ? { ...message.args, judgeClient: createHostClient('judge') } : message.args;
  let loaded: unknown;
  try {
    loaded = await (exports.default as (args: Record<string, unknown>) => unknown)(args);
  } catch (error) {
    throw new Error(`loadEnvironment(${JSON.stringify(message.args)}) threw: ${errorMessage(error)}`);
  }
  if (!isEnvironment(loaded)) throw new Error(`loadEnvironment() must return an environment (a SingleTurnEnv, MultiTurnEnv, ToolEnv, ...), got ${describeValue(loaded)}`);
  const info: EnvironmentInfo = {
    name: loaded.name,
    kind: Object.getPrototypeOf(loaded)?.constructor?.name ?? 'Environment',
    numTasks: loaded.dataset.length,
    numEvaluationTasks: loaded.evaluationTasks.length,
    rewardNames: loaded.rubric.rewards.map((reward) => reward.name),
    rewardWeights: loaded.rubric.rewards.map((reward) => reward.weight),
    metricKinds: loaded.rubric.metricKinds,
    passThreshold: loaded.passThreshold,
    ...(typeof loaded.parser?.formatAnswer === 'function' ? { answerTemplate: String(loaded.parser.formatAnswer(ANSWER_PLACEHOLDER)) } : {}),
    ...(loaded.rubric.groupRewards?.length > 0 ? { groupRewardNames: loaded.rubric.groupRewards.map((reward) => reward.name), groupRewardWeights: loaded.rubric.groupRewards.map((reward) => reward.weight) } : {}),
    ...(loaded instanceof tabrl.MultiTurnEnv && loaded.tools ? { tools: toPlainData(loaded.tools) as tabrl.ToolSchema[] } : {}),
  };
  const dataset = toPlainData(loaded.dataset) as Task[];
  const evalDataset = optionalTasks(loaded.evalDataset, 'evalDataset');
  // Sent only when the environment sets its own demonstration tasks; warm-up falls back to `dataset` otherwise.
  const demonstrationDataset = optionalTasks(loaded.demonstrationDataset, 'demonstrationDataset');
  checkSize([dataset, evalDataset, demonstrationDataset], 'the dataset');
  environment = loaded;
  const setup: EnvironmentSetup = {
    ...(loaded.systemPrompt !== undefined ? { systemPrompt: loaded.systemPrompt } : {}),
    fewShot: toPlainData(loaded.fewShot) as tabrl.Message[],
    samplingArgs: toPlainData(loaded.samplingArgs) as tabrl.SamplingArgs,
  };
  sendToHost({ type: 'loaded', info, setup, dataset, evalDataset, demonstrationDataset });
}

/** An optional split of the environment as data: null when unset, an error naming it when it is not an array. */
function optionalTasks(tasks: unknown, name: string): Task[] | null {
  if (tasks === undefined || tasks === null) return null;
  if (!Array.isArray(tasks)) throw new Error(`the environment's ${name} must be an array of tasks, got ${describeValue(tasks)}`);
  return toPlainData(tasks) as Task[];
}

/** The environment's tasks that a task reference's split indexes into. */
function tasksOfSplit(env: Environment, split: 'train' | 'eval' | 'demonstration'): Task[] {
  if (split === 'train') return env.dataset;
  return split === 'eval' ? env.evaluationTasks : env.demonstrationTasks;
}

async function rollout(message: Extract<HostMessage, { type: 'rollout' }>): Promise<void> {
  const env = environment;
  const { rolloutId } = message;
  sendToHost({ type: 'entered', rolloutId });
  try {
    if (!env) throw new Error('no environment is loaded');
    const task = 'task' in message.task ? message.task.task : tasksOfSplit(env, message.task.split)[message.task.index];
    if (!task) throw new Error(`${env.name} has no task ${JSON.stringify(message.task)}`);
    const controller = new AbortController();
    rolloutSignals.set(rolloutId, controller);
    const trajectory = await currentRollout.run(rolloutId, () => {
      // Synchronous code of a rollout's start runs here, outside any async callback.
      reportedRunning = rolloutId;
      sendToHost({ type: 'running', rolloutId });
      return env.rollout(createHostClient('policy', rolloutId), task, message.samplingArgs, { model: message.model, signal: controller.signal, taskIndex: message.taskIndex });
    });
    const plain = toPlainData({ ...trajectory, passed: env.isPassed(trajectory) }) as SandboxTrajectory;
    try {
      checkSize(plain, 'the rollout');
      sendToHost({ type: 'rollout-done', rolloutId, trajectory: plain });
    } catch (error) {
      // Keep the verdict; drop the transcript and state that are too large to keep.
      const note = [{ role: 'user' as const, content: `[removed by tabrl: ${errorMessage(error)}]` }];
      const errors = [...plain.errors, { source: 'env' as const, name: `${env.name}.rollout`, message: errorMessage(error) }];
      const state = { prompt: [], completion: note, info: {}, turn: plain.state.turn };
      sendToHost({ type: 'rollout-done', rolloutId, trajectory: { ...plain, prompt: [], completion: note, info: {}, state, turns: [], errors } as SandboxTrajectory });
    }
  } catch (error) {
    sendToHost({ type: 'rollout-failed', rolloutId, message: errorMessage(error) });
  } finally {
    rolloutSignals.delete(rolloutId);
  }
}

/** Runs the group reward functions on one task's finished rollouts and sends their verdicts back. */
async function scoreGroup(message: Extract<HostMessage, { type: 'score-group' }>): Promise<void> {
  const env = environment;
  const { rolloutId } = message;
  sendToHost({ type: 'entered', rolloutId });
  try {
    if (!env) throw new Error('no environment is loaded');
    const scored = await currentRollout.run(rolloutId, () => {
      reportedRunning = rolloutId;
      sendToHost({ type: 'running', rolloutId });
      return env.scoreGroup(message.group);
    });
    const verdicts = scored.map((trajectory, i) => {
      const before = message.group[i]!;
      const names = env.rubric.groupRewards.map((reward) => reward.name);
      return {
        reward: trajectory.reward - before.reward,
        scores: Object.fromEntries(names.map((name) => [name, trajectory.scores[name] ?? 0])),
        errors: trajectory.errors.slice(before.errors.length),
      };
    });
    sendToHost({ type: 'group-scored', rolloutId, verdicts: toPlainData(verdicts) as typeof verdicts, passed: scored.map((trajectory) => env.isPassed(trajectory)) });
  } catch (error) {
    sendToHost({ type: 'rollout-failed', rolloutId, message: errorMessage(error) });
  }
}

process.on('message', (message: HostMessage) => {
  if (message.type === 'load') {
    load(message).catch((error: unknown) => sendToHost({ type: 'load-failed', message: errorMessage(error) }));
  } else if (message.type === 'rollout') {
    void rollout(message);
  } else if (message.type === 'score-group') {
    void scoreGroup(message);
  } else if (message.type === 'completion') {
    pendingCalls.get(message.callId)?.(message.outcome);
    pendingCalls.delete(message.callId);
  } else if (message.type === 'abort') {
    rolloutSignals.get(message.rolloutId)?.abort();
  } else if (message.type === 'ping') {
    sendToHost({ type: 'pong' });
  }
});

// Tell the host whose code runs whenever that changes (async callbacks carry their rollout's store).
let reportedRunning = -1;
createHook({
  before() {
    const rolloutId = currentRollout.getStore() ?? -1;
    if (rolloutId === reportedRunning) return;
    reportedRunning = rolloutId;
    sendToHost({ type: 'running', rolloutId });
  },
}).enable();
// Ctrl-C reaches the whole process group; the host decides what a stop means and kills this process itself.
process.on('SIGINT', () => {});
process.on('SIGTERM', () => {});
sendToHost({ type: 'ready' });
// The host went away: nothing is left to do.
process.on('disconnect', () => exitProcess(0));
