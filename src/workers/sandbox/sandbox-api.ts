/**
 * The API the sandbox worker exposes, apart from how a module's text is run (that needs the
 * worker's `importScripts`, see runtime.ts): load an environment (with a lent judge as
 * `args.judgeClient` and a lent tool simulator as `args.simulatorClient`), evaluate it, roll out training tasks and score their groups, abort. Model, judge and simulator calls go back
 * to the app through the host objects it is given. Loading, the description, rollouts and group
 * scoring are the isolation layer's (src/isolation), shared with the CLI's QuickJS guest; this adds
 * comlink's shape, rollout ids and evaluation. Pure enough to run in Node against a fake port.
 */
import { evaluate, ScriptedClient, type ChatClient, type Environment, type RolloutRecord, type SamplingArgs, type Task, type RolloutOptions } from '../../envs/index.ts';
import type { SandboxApi, SandboxEvaluateOptions, SandboxEvaluateResult, SandboxHost, SandboxTrajectory } from './protocol.ts';
import { toPlainData } from '../../envs/plain-data.ts';
import { relayedClient } from '../../isolation/relay.ts';
import { plantedPathOf, plantedPathPolicy } from '../../envs/studio/index.ts';
import { describeEnvironment } from '../../isolation/environment-info.ts';
import { loadEnvironmentModule } from '../../isolation/environment-module.ts';
import { runRollout, scoreGroupOf, taskOf } from '../../isolation/hosted-rollout.ts';

/** Runs an environment module's text and returns its exports (CommonJS `module.exports`). */
export type RunModule = (code: string) => Record<string, unknown>;

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
    async loadEnvironment(code, args, judge, simulator) {
      const judgeClient = judge ? relayedClient((request) => judge.judgeCompletion(request)) : undefined;
      const simulatorClient = simulator ? relayedClient((request) => simulator.simulatorCompletion(request)) : undefined;
      const loaded = await loadEnvironmentModule(runModule(code), args, { judgeClient, simulatorClient });
      environment = loaded.environment;
      return describeEnvironment(loaded.environment, loaded.unusedArgWarnings);
    },

    async evaluate(options: SandboxEvaluateOptions, host: SandboxHost): Promise<SandboxEvaluateResult> {
      const env = environment;
      if (!env) throw new Error('no environment is loaded');
      running = new AbortController();
      // evaluate() does not say which rollout of a task it starts; rollouts of one task start in order.
      const started = new Map<number, number>();
      const rollout = env.rollout.bind(env);
      // A planted task's reference path is played here, where the tasks are: the app gets the records.
      const tasks = options.split === 'train' ? env.dataset : options.split === 'demonstration' ? env.demonstrationTasks : env.evaluationTasks;
      const plantedPaths = options.policy === 'planted-paths' ? plantedPathsClient(env, tasks) : undefined;
      env.rollout = async (_client: ChatClient, task: Task, samplingArgs?: SamplingArgs, rolloutOptions?: RolloutOptions) => {
        const rolloutId = nextRolloutId++;
        const taskIndex = rolloutOptions?.taskIndex ?? -1;
        const rolloutIndex = started.get(taskIndex) ?? 0;
        started.set(taskIndex, rolloutIndex + 1);
        host.rolloutStarted({ rolloutId, taskIndex, rolloutIndex });
        try {
          return await rollout(plantedPaths ?? createHostClient(host, rolloutId), task, samplingArgs, rolloutOptions);
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
          tasks,
          signal: running.signal,
          onProgress: ({ done, total, record }) => host.recordFinished(toPlainData(record) as RolloutRecord, done, total),
        });
        return { summary: result.summary, wallMs: result.wallMs, ...(result.stoppedEarly ? { stoppedEarly: result.stoppedEarly } : {}) };
      } finally {
        env.rollout = rollout;
        running = undefined;
      }
    },

    async rollout(taskIndex: number, samplingArgs: SamplingArgs, model: string, host: SandboxHost, given?: Task): Promise<SandboxTrajectory> {
      const env = environment;
      if (!env) throw new Error('no environment is loaded');
      const task = given ?? taskOf(env, { split: 'train', index: taskIndex });
      const rolloutId = nextRolloutId++;
      host.rolloutStarted({ rolloutId, taskIndex, rolloutIndex: 0 });
      try {
        return await runRollout(env, task, createHostClient(host, rolloutId), samplingArgs, { model, signal: training.signal, taskIndex });
      } finally {
        host.rolloutFinished(rolloutId);
      }
    },

    trainingTasks(): Task[] {
      const env = environment;
      if (!env) throw new Error('no environment is loaded');
      return toPlainData(env.dataset) as Task[];
    },

    async scoreGroup(group: SandboxTrajectory[]): Promise<SandboxTrajectory[]> {
      const env = environment;
      if (!env) throw new Error('no environment is loaded');
      return scoreGroupOf(env, group);
    },

    abort() {
      running?.abort();
      training.abort();
      training = new AbortController();
    },
  };
}

/** A client that plays the reference paths of `tasks` planted backwards; refused, saying what to pick, when none has one. */
function plantedPathsClient(env: Environment, tasks: readonly Task[]): ChatClient {
  if (!tasks.some((task) => plantedPathOf(task) !== undefined)) {
    throw new Error(`${env.name}'s tasks were not planted backwards (no info.planted), so they have no reference paths to play: choose the endpoint or a WebLLM model as the teacher`);
  }
  return new ScriptedClient(plantedPathPolicy(tasks, (reply) => env.parser.formatAnswer(reply)));
}
