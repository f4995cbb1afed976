/**
 * One served session: the episodes one client plays, one at a time. `reset` starts the
 * environment's own `rollout()` with a `RemotePolicy` and answers with the first model request as
 * an observation; `step` hands the client's reply to that request and answers with the next one,
 * or, once the rollout has returned and its group rewards are scored (as `evaluate()` does), with
 * the final observation and the rubric's total. So every harness (single-turn, multi-turn, tools,
 * an environment file's process) runs unchanged, and rewards equal `tabrl eval`'s by construction.
 *
 * `ServedEnvironment` is what all sessions share: the loaded environment, its tools and the task
 * order. Neither knows about sockets; the server (server.ts) moves their results over the wire.
 */
import { randomUUID } from 'node:crypto';
import { MultiTurnEnv, type Environment, type Task, type ToolSchema, type Trajectory } from '../../envs/index.ts';
import { errorMessage } from '../../common/error-message.ts';
import { IsolatedEnvironment } from '../isolated-environment.ts';
import { assistantMessageOf, describe, finalObservation, turnObservation, type EpisodeContext } from './observation.ts';
import { RemotePolicy, type PolicyEvent } from './remote-policy.ts';
import { WireError, type ResetData, type SessionState, type Split, type StepResult } from './wire.ts';

/** The environment every session plays, its tools, and the shared order of tasks for resets that name none. */
export class ServedEnvironment {
  readonly tools: ToolSchema[] | undefined;
  readonly metricNames: string[];
  /** Whether the rubric has group rewards, scored on a group of one when a rollout returns (as `evaluate()` does). */
  readonly scoresGroups: boolean;
  /**
   * Whether a rollout needs an abort signal to stop. `MultiTurnEnv`'s own loop reads its signal only
   * before a model call and hands it to the client, which here is the episode's `RemotePolicy`, whose
   * `cancel()` ends that loop in the same way; so such episodes go without an `AbortController`
   * (making one costs as much as the rest of a served turn's bookkeeping). Any other rollout (an
   * environment file's process, an override of `rollout`) gets one.
   */
  readonly rolloutNeedsSignal: boolean;
  private readonly nextIndex: Record<Split, number> = { train: 0, eval: 0 };

  constructor(
    readonly env: Environment,
    readonly defaultSplit: Split,
  ) {
    this.tools = env instanceof IsolatedEnvironment ? env.info.tools : env instanceof MultiTurnEnv ? env.tools : undefined;
    this.metricNames = Object.keys(env.rubric.metricKinds);
    this.scoresGroups = env.rubric.hasGroupRewards;
    this.rolloutNeedsSignal = env.rollout !== MultiTurnEnv.prototype.rollout;
  }

  /** The tasks of a split: the training set, or the evaluation set (the training set when there is none). */
  tasks(split: Split): Task[] {
    return split === 'train' ? this.env.dataset : this.env.evaluationTasks;
  }

  /** The next task index of a split in order, wrapping around. */
  takeNextIndex(split: Split): number {
    const count = this.tasks(split).length;
    const index = this.nextIndex[split] % count;
    this.nextIndex[split] = index + 1;
    return index;
  }
}

interface Episode {
  id: string;
  context: EpisodeContext;
  policy: RemotePolicy;
  /** Stops the rollout where the policy's cancellation alone would not (see `ServedEnvironment.rolloutNeedsSignal`). */
  abort: AbortController | undefined;
  steps: number;
  done: boolean;
  /** The rollout has returned (or thrown): there is nothing left to stop. */
  settled: boolean;
}

/** The episodes of one client, one at a time. */
export class ServeSession {
  private episode: Episode | undefined;

  constructor(private readonly served: ServedEnvironment) {}

  /** Ends the running episode, if any, and starts one on the task the data picks; resolves with its first observation. */
  async reset(data: unknown): Promise<StepResult> {
    const reset = parseResetData(data);
    this.endEpisode('a new episode was started');
    const split = reset.split ?? this.served.defaultSplit;
    const tasks = this.served.tasks(split);
    if (tasks.length === 0) throw new WireError('VALIDATION_ERROR', `${this.served.env.name} has no ${split} tasks; reset with the other split`);
    if (reset.task_index !== undefined && reset.task_index >= tasks.length) {
      throw new WireError('VALIDATION_ERROR', `task_index ${reset.task_index} is out of range: the ${split} split has ${tasks.length} tasks (0 to ${tasks.length - 1})`);
    }
    const taskIndex = reset.task_index ?? (reset.seed !== undefined ? reset.seed % tasks.length : this.served.takeNextIndex(split));
    const task = tasks[taskIndex]!;
    const episode: Episode = {
      id: reset.episode_id ?? randomUUID(),
      context: { taskIndex, split, info: task.info, tools: this.served.tools },
      policy: new RemotePolicy(),
      abort: this.served.rolloutNeedsSignal ? new AbortController() : undefined,
      steps: 0,
      done: false,
      settled: false,
    };
    this.episode = episode;
    const env = this.served.env;
    const rollout = env.rollout(episode.policy, task, {}, episode.abort ? { signal: episode.abort.signal, taskIndex } : { taskIndex });
    const scored = this.served.scoresGroups ? rollout.then((trajectory) => (trajectory.stopReason === 'aborted' ? trajectory : scoreAlone(env, trajectory))) : rollout;
    void scored.then(
      (trajectory) => {
        episode.settled = true;
        episode.policy.finish(trajectory);
      },
      (error: unknown) => {
        episode.settled = true;
        episode.policy.finish(crashedTrajectory(task, taskIndex, `${env.name}: ${errorMessage(error)}`));
      },
    );
    return this.observe(episode, await episode.policy.nextEvent());
  }

  /** Answers the episode's waiting model request with the client's reply; resolves with the next observation. */
  async step(data: unknown): Promise<StepResult> {
    const episode = this.episode;
    if (!episode) throw new WireError('SESSION_ERROR', 'no episode is running: send {"type":"reset"} first');
    if (episode.done) throw new WireError('SESSION_ERROR', 'the episode is over (its last observation had done: true); send {"type":"reset"} to start another');
    const request = episode.policy.pendingRequest;
    if (!request) throw new WireError('SESSION_ERROR', 'the episode is not waiting for a reply; send {"type":"reset"} to start another');
    const message = assistantMessageOf(data, episode.steps, (request.tools ?? episode.context.tools ?? []).length > 0);
    episode.steps += 1;
    episode.policy.answer(message);
    return this.observe(episode, await episode.policy.nextEvent());
  }

  /** The session's state: its episode's id, steps taken, task and whether it is over. */
  state(): SessionState {
    const episode = this.episode;
    return { episode_id: episode?.id ?? null, step_count: episode?.steps ?? 0, task_index: episode?.context.taskIndex ?? null, split: episode?.context.split ?? null, done: episode?.done ?? false };
  }

  /** Stops the running episode: its waiting model request fails as cancelled, so its rollout ends (in an environment file's process too). */
  close(reason = 'the session was closed'): void {
    this.endEpisode(reason);
  }

  private endEpisode(reason: string): void {
    const episode = this.episode;
    if (!episode) return;
    this.episode = undefined;
    episode.done = true;
    // A finished rollout has nothing to stop (and an abort is not free: it builds a DOMException with its stack).
    if (episode.settled) return;
    episode.policy.cancel(reason);
    episode.abort?.abort();
  }

  private observe(episode: Episode, event: PolicyEvent): StepResult {
    if (event.kind === 'request') return turnObservation(event.request.messages, episode.context);
    episode.done = true;
    if (event.kind === 'cancelled') throw new WireError('EXECUTION_ERROR', `the episode was stopped before it finished: ${event.reason}; reset to play another`);
    const trajectory = event.trajectory;
    const envError = trajectory.stopReason === 'error' ? trajectory.errors.find((error) => error.source === 'env') : undefined;
    if (envError) throw new WireError('EXECUTION_ERROR', `the environment failed: ${envError.name}: ${envError.message}`);
    if (trajectory.stopReason === 'aborted') throw new WireError('EXECUTION_ERROR', 'the episode was stopped before it finished; reset to play another');
    return finalObservation(trajectory, episode.context, this.served.metricNames);
  }
}

/** Scores the rubric's group rewards on a group of one, as `evaluate()` does with one rollout per task. */
async function scoreAlone(env: Environment, trajectory: Trajectory): Promise<Trajectory> {
  const [scored] = await env.scoreGroup([trajectory]);
  return scored!;
}

function crashedTrajectory(task: Task, taskIndex: number, message: string): Trajectory {
  return {
    taskIndex,
    prompt: task.prompt ?? [],
    completion: [],
    info: task.info ?? {},
    state: { prompt: [], completion: [], info: {}, turn: 0 },
    reward: 0,
    scores: {},
    errors: [{ source: 'env', name: 'rollout', message }],
    stopReason: 'error',
    truncated: false,
    turns: [],
    timings: { generationMs: 0, scoringMs: 0, totalMs: 0 },
  };
}

/** The reset data, checked; other keys (a dataset row's columns) are allowed and ignored. */
export function parseResetData(data: unknown): ResetData {
  if (data === undefined || data === null) return {};
  if (typeof data !== 'object' || Array.isArray(data)) throw new WireError('VALIDATION_ERROR', `the reset's data must be a JSON object, got ${describe(data)}`);
  const { seed, episode_id, task_index, split } = data as Record<string, unknown>;
  const reset: ResetData = {};
  if (seed !== undefined && seed !== null) {
    if (!Number.isSafeInteger(seed) || (seed as number) < 0) throw new WireError('VALIDATION_ERROR', `"seed" must be an integer ≥ 0, got ${describe(seed)}`);
    reset.seed = seed as number;
  }
  if (episode_id !== undefined && episode_id !== null) {
    if (typeof episode_id !== 'string') throw new WireError('VALIDATION_ERROR', `"episode_id" must be a string, got ${describe(episode_id)}`);
    reset.episode_id = episode_id;
  }
  if (task_index !== undefined && task_index !== null) {
    if (!Number.isSafeInteger(task_index) || (task_index as number) < 0) throw new WireError('VALIDATION_ERROR', `"task_index" must be an integer ≥ 0, got ${describe(task_index)}`);
    reset.task_index = task_index as number;
  }
  if (split !== undefined && split !== null) {
    if (split !== 'train' && split !== 'eval') throw new WireError('VALIDATION_ERROR', `"split" must be "train" or "eval", got ${describe(split)}`);
    reset.split = split;
  }
  return reset;
}
