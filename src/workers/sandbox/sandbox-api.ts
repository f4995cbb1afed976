/**
 * The API the sandbox worker exposes, apart from how a module's text is run (that needs the
 * worker's `importScripts`, see runtime.ts): load an environment (with a lent judge as
 * `args.judgeClient`), evaluate it, roll out training tasks and score their groups, abort. Model and judge calls go back
 * to the app through the host objects it is given. Pure enough to run in Node against a fake port.
 */
import * as tabrl from '../../envs/index.ts';
import { evaluate, type ChatClient, type Environment, type RolloutRecord, type SamplingArgs, type Task, type RolloutOptions, type Trajectory } from '../../envs/index.ts';
import type { EnvironmentInfo, SandboxApi, SandboxEvaluateOptions, SandboxEvaluateResult, SandboxHost, SandboxTrajectory } from './protocol.ts';
import { toPlainData } from '../../envs/plain-data.ts';
import { relayedClient } from './relay.ts';
import { errorMessage } from '../../common/error-message.ts';
import { watchEnvArgs } from '../../common/unused-env-args.ts';

/** Runs an environment module's text and returns its exports (CommonJS `module.exports`). */
export type RunModule = (code: string) => Record<string, unknown>;

function isEnvironment(value: unknown): value is Environment {
  const candidate = value as Partial<Environment> | null;
  return typeof candidate === 'object' && candidate !== null && typeof candidate.rollout === 'function' && Array.isArray(candidate.dataset);
}

/** The sandbox's API over `runModule`; it holds the one loaded environment. */
export function createSandboxApi(runModule: RunModule): SandboxApi {
  let environment: Environment | undefined;
  let running: AbortController | undefined;
  /** Cancels the training rollouts in flight; replaced after each abort. */
  let training = new AbortController();
  /** Rollout ids, unique for the life of this sandbox (evaluations and training rollouts share them). */
  let nextRolloutId = 0;

  /** A chat client whose calls cross to the app, tagged with the rollout they belong to. */
  function createHostClient(host: SandboxHost, rolloutId: number): ChatClient {
    return relayedClient((request) => host.createCompletion(rolloutId, request));
  }

  return {
    async loadEnvironment(code, args, judge) {
      const exports = runModule(code);
      const load = exports.default;
      if (typeof load !== 'function') {
        throw new Error('the environment file has no default export; it ends with `export default function loadEnvironment(args) { ... }`');
      }
      // The lent judge replaces any judgeClient in args (plain data cannot hold a client anyway).
      const loadArgs = judge ? { ...args, judgeClient: relayedClient((request) => judge.judgeCompletion(request)) } : args;
      // Keys the file never reads while loading (a typo, another file's arguments) are reported, as tabrl eval does.
      const watched = watchEnvArgs(loadArgs, ['judgeClient', 'judgeModel']);
      const loaded: unknown = await (load as (args: Record<string, unknown>) => unknown)(watched.args);
      if (!isEnvironment(loaded)) throw new Error('loadEnvironment() must return an environment (a SingleTurnEnv, MultiTurnEnv, ToolEnv, ...)');
      environment = loaded;
      const info: EnvironmentInfo = {
        name: loaded.name,
        kind: Object.getPrototypeOf(loaded)?.constructor?.name ?? 'Environment',
        numTasks: loaded.dataset.length,
        numEvaluationTasks: loaded.evaluationTasks.length,
        rewardNames: loaded.rubric.rewards.map((reward) => reward.name),
        rewardWeights: loaded.rubric.rewards.map((reward) => reward.weight),
        metricKinds: loaded.rubric.metricKinds,
        passThreshold: loaded.passThreshold,
        ...(loaded instanceof tabrl.MultiTurnEnv && loaded.tools ? { tools: toPlainData(loaded.tools) as tabrl.ToolSchema[] } : {}),
        ...(loaded.rubric.hasGroupRewards
          ? { groupRewardNames: loaded.rubric.groupRewards.map((reward) => reward.name), groupRewardWeights: loaded.rubric.groupRewards.map((reward) => reward.weight) }
          : {}),
      };
      const unused = watched.unusedWarnings('The environment argument');
      if (unused.length > 0) info.unusedArgWarnings = unused;
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
          ...(options.split === 'train' ? { tasks: env.dataset } : options.split === 'demonstration' ? { tasks: env.demonstrationTasks } : {}),
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

    async scoreGroup(group: SandboxTrajectory[]): Promise<SandboxTrajectory[]> {
      const env = environment;
      if (!env) throw new Error('no environment is loaded');
      if (!env.rubric.hasGroupRewards || group.length === 0) return group;
      let scored: Trajectory[];
      try {
        scored = await env.scoreGroup(group);
      } catch (error) {
        // The rubric records a throwing function itself; this is an environment whose own scoreGroup threw.
        scored = groupFailed(env, group, errorMessage(error));
      }
      return toPlainData(scored.map((trajectory) => ({ ...trajectory, passed: env.isPassed(trajectory) }))) as SandboxTrajectory[];
    },

    abort() {
      running?.abort();
      training.abort();
      training = new AbortController();
    },
  };
}

/** The group scored 0 by every group reward function, each with `message` as its error on every rollout (as the CLI's isolated environment does). */
function groupFailed(env: Environment, group: Trajectory[], message: string): Trajectory[] {
  const names = env.rubric.groupRewards.map((reward) => reward.name);
  return group.map((trajectory) => ({
    ...trajectory,
    scores: { ...trajectory.scores, ...Object.fromEntries(names.map((name) => [name, 0])) },
    errors: [...trajectory.errors, ...names.map((name) => ({ source: 'reward' as const, name, message: `the group reward functions did not finish: ${message}` }))],
  }));
}
