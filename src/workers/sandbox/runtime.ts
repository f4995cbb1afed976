/**
 * The sandbox worker: runs a user's environment module and evaluates it, inside a classic blob
 * worker started by the opaque-origin sandbox frame (public/sandbox/frame.html). It is bundled with
 * src/envs into one IIFE script at build time (`virtual:tabrl-sandbox-runtime`, see vite.config.ts).
 *
 * The worker has no network (the frame's CSP) and no app storage (opaque origin); it talks to the
 * app only over the MessagePort it is given, with comlink. Model calls cross back to the app. It is
 * not the place for time limits: a blocked worker cannot time itself, so the app's bridge watches
 * it and terminates it (src/workers/sandbox-bridge.ts).
 */
import * as Comlink from 'comlink';
import * as tabrl from '../../envs/index.ts';
import { ChatClientError, evaluate, type ChatClient, type ChatRequest, type Environment, type RolloutRecord, type SamplingArgs, type Task, type RolloutOptions } from '../../envs/index.ts';
import { WORKER_CONNECT, type EnvironmentInfo, type SandboxApi, type SandboxEvaluateOptions, type SandboxEvaluateResult, type SandboxHost, type SandboxTrajectory } from './protocol.ts';
import { toPlainData } from '../../envs/plain-data.ts';
import { errorMessage } from '../../common/error-message.ts';

declare const self: DedicatedWorkerGlobalScope & { __tabrlDefine?: (factory: ModuleFactory) => void };

type ModuleFactory = (module: { exports: Record<string, unknown> }, exports: Record<string, unknown>, require: (name: string) => unknown) => void;

/** Modules an environment file may import: the API, and each built-in file as `tabrl/builtin/<path>`. */
const MODULES = new Map<string, unknown>([['tabrl', tabrl]]);
for (const [path, module] of Object.entries(import.meta.glob(['../../envs/builtin/**/*.ts', '!../../envs/builtin/index.ts'], { eager: true }))) {
  MODULES.set(`tabrl/builtin/${path.replace('../../envs/builtin/', '').replace(/\.ts$/, '')}`, module);
}

function requireModule(name: string): unknown {
  const module = MODULES.get(name.replace(/\.ts$/, ''));
  if (module === undefined) {
    throw new Error(`cannot import "${name}" in the sandbox: an environment file imports only from 'tabrl' (and 'tabrl/builtin/...'); put everything else in the file itself`);
  }
  return module;
}

/** Runs CommonJS text as a script from a blob (the CSP allows blob: scripts, not eval) and returns its exports. */
function runModule(code: string): Record<string, unknown> {
  let factory: ModuleFactory | undefined;
  self.__tabrlDefine = (defined) => { factory = defined; };
  const url = URL.createObjectURL(new Blob([`self.__tabrlDefine(function (module, exports, require) {\n${code}\n});\n//# sourceURL=environment.js`], { type: 'text/javascript' }));
  try {
    importScripts(url);
  } catch (error) {
    throw new Error(`the environment file does not parse: ${errorMessage(error)}`);
  } finally {
    URL.revokeObjectURL(url);
    delete self.__tabrlDefine;
  }
  if (!factory) throw new Error('the environment file did not load');
  const module = { exports: {} as Record<string, unknown> };
  factory(module, module.exports, requireModule);
  return module.exports;
}

function isEnvironment(value: unknown): value is Environment {
  const candidate = value as Partial<Environment> | null;
  return typeof candidate === 'object' && candidate !== null && typeof candidate.rollout === 'function' && Array.isArray(candidate.dataset);
}


let environment: Environment | undefined;
let running: AbortController | undefined;
/** Cancels the training rollouts in flight; replaced after each abort. */
let training = new AbortController();
/** Rollout ids, unique for the life of this sandbox (evaluations and training rollouts share them). */
let nextRolloutId = 0;

/** A chat client whose calls cross to the app, tagged with the rollout they belong to. */
function createHostClient(host: SandboxHost, rolloutId: number): ChatClient {
  return {
    chat: {
      completions: {
        async create(request: ChatRequest) {
          const { signal, ...plain } = request;
          if (signal?.aborted) throw new ChatClientError('the request was cancelled', 'aborted');
          const outcome = await host.createCompletion(rolloutId, plain);
          if (outcome.ok) return outcome.completion;
          throw new ChatClientError(outcome.message, outcome.kind, outcome.status);
        },
      },
    },
  };
}

const api: SandboxApi = {
  async loadEnvironment(code, args) {
    const exports = runModule(code);
    const load = exports.default;
    if (typeof load !== 'function') {
      throw new Error('the environment file has no default export; it ends with `export default function loadEnvironment(args) { ... }`');
    }
    const loaded: unknown = await (load as (args: Record<string, unknown>) => unknown)(args);
    if (!isEnvironment(loaded)) throw new Error('loadEnvironment() must return an environment (a SingleTurnEnv, MultiTurnEnv, ToolEnv, ...)');
    environment = loaded;
    const info: EnvironmentInfo = {
      name: loaded.name,
      kind: Object.getPrototypeOf(loaded)?.constructor?.name ?? 'Environment',
      numTasks: loaded.dataset.length,
      numEvaluationTasks: loaded.evaluationTasks.length,
      rewardNames: loaded.rubric.rewards.map((reward) => reward.name),
      rewardWeights: loaded.rubric.rewards.map((reward) => reward.weight),
      passThreshold: loaded.passThreshold,
      ...(loaded instanceof tabrl.MultiTurnEnv && loaded.tools ? { tools: toPlainData(loaded.tools) as tabrl.ToolSchema[] } : {}),
    };
    return info;
  },

  async evaluate(options: SandboxEvaluateOptions, host: SandboxHost): Promise<SandboxEvaluateResult> {
    const env = environment;
    if (!env) throw new Error('no environment is loaded');
    running = new AbortController();
    // evaluate() does not say which rollout of a task it starts; rollouts of one task start in order.
    const started = new Map<number, number>();
    const rollout = env.rollout.bind(env);
    env.rollout = async (_client: ChatClient, task: Task, samplingArgs?: SamplingArgs, rolloutOptions?: RolloutOptions) => {
      const rolloutId = nextRolloutId++;
      const taskIndex = rolloutOptions?.taskIndex ?? -1;
      const rolloutIndex = started.get(taskIndex) ?? 0;
      started.set(taskIndex, rolloutIndex + 1);
      host.rolloutStarted({ rolloutId, taskIndex, rolloutIndex });
      try {
        return await rollout(createHostClient(host, rolloutId), task, samplingArgs, rolloutOptions);
      } finally {
        host.rolloutFinished(rolloutId);
      }
    };
    try {
      const result = await evaluate(env, createHostClient(host, -1), {
        ...(options.numTasks !== undefined ? { numTasks: options.numTasks } : {}),
        rolloutsPerTask: options.rolloutsPerTask,
        concurrency: options.concurrency,
        samplingArgs: options.samplingArgs,
        model: options.model,
        ...(options.split === 'train' ? { tasks: env.dataset } : {}),
        signal: running.signal,
        onProgress: ({ done, total, record }) => host.recordFinished(toPlainData(record) as RolloutRecord, done, total),
      });
      return { summary: result.summary, wallMs: result.wallMs, ...(result.stoppedEarly ? { stoppedEarly: result.stoppedEarly } : {}) };
    } finally {
      env.rollout = rollout;
      running = undefined;
    }
  },

  async rollout(taskIndex: number, samplingArgs: SamplingArgs, model: string, host: SandboxHost): Promise<SandboxTrajectory> {
    const env = environment;
    if (!env) throw new Error('no environment is loaded');
    const task = env.dataset[taskIndex];
    if (!task) throw new Error(`${env.name} has no training task ${taskIndex} (it has ${env.dataset.length})`);
    const rolloutId = nextRolloutId++;
    host.rolloutStarted({ rolloutId, taskIndex, rolloutIndex: 0 });
    try {
      const trajectory = await env.rollout(createHostClient(host, rolloutId), task, samplingArgs, { model, signal: training.signal, taskIndex });
      return toPlainData({ ...trajectory, taskIndex, passed: env.isPassed(trajectory) }) as SandboxTrajectory;
    } finally {
      host.rolloutFinished(rolloutId);
    }
  },

  abort() {
    running?.abort();
    training.abort();
    training = new AbortController();
  },
};

self.addEventListener('message', function connect(event: MessageEvent) {
  const data = event.data as { type?: string } | undefined;
  if (data?.type !== WORKER_CONNECT || !event.ports[0]) return;
  self.removeEventListener('message', connect);
  Comlink.expose(api, event.ports[0]);
});
