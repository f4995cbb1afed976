/**
 * The environment: a dataset of tasks, a system prompt, a parser and a rubric, plus a rollout
 * protocol. The same object serves evaluation, synthetic SFT data and RL. `MultiTurnEnv` holds the
 * rollout loop; `SingleTurnEnv` and `ToolEnv` specialise it.
 */
import type { ChatClient } from './client.ts';
import { Parser } from './parser.ts';
import { Rubric } from './rubric.ts';
import type { Message, SamplingArgs, State, Task, Trajectory } from './types.ts';

/** Options shared by every environment. */
export interface EnvironmentOptions<S extends State = State> {
  /** A short name, shown in results and error messages. */
  name?: string;
  /** Training tasks. */
  dataset: Task[];
  /** Held-out tasks for evaluation; evaluation uses `dataset` when absent. */
  evalDataset?: Task[];
  /** Tasks for warm-up demonstrations, when they must differ from the RL tasks in `dataset` (used when present; `dataset` otherwise). */
  demonstrationDataset?: Task[];
  /** Prepended to prompts built from `question`. */
  systemPrompt?: string;
  /** Example exchanges placed between the system prompt and the question. */
  fewShot?: Message[];
  parser?: Parser;
  rubric?: Rubric<S>;
  /** Sampling defaults for this environment (overridden by the caller's). */
  samplingArgs?: SamplingArgs;
  /** A rollout passes when its reward reaches this (default 1); used for pass rates and pass@k. */
  passThreshold?: number;
}

/** How a rollout is run. */
export interface RolloutOptions {
  /** The model name sent with each request (default "default"). */
  model?: string;
  /** Stops the rollout between (and, where the client supports it, during) model calls. */
  signal?: AbortSignal;
  /** The task's index in its dataset, recorded on the trajectory. */
  taskIndex?: number;
}

/** Base class of every environment: data, prompt, parser, rubric, and an abstract rollout. */
export abstract class Environment<S extends State = State> {
  readonly name: string;
  readonly dataset: Task[];
  readonly evalDataset: Task[] | undefined;
  readonly demonstrationDataset: Task[] | undefined;
  readonly systemPrompt: string | undefined;
  readonly fewShot: Message[];
  readonly parser: Parser;
  readonly rubric: Rubric<S>;
  readonly samplingArgs: SamplingArgs;
  readonly passThreshold: number;

  constructor(options: EnvironmentOptions<S>) {
    if (!Array.isArray(options.dataset)) throw new Error('Environment: dataset must be an array of tasks');
    this.name = options.name ?? this.constructor.name;
    this.dataset = options.dataset;
    this.evalDataset = options.evalDataset;
    this.demonstrationDataset = options.demonstrationDataset;
    this.systemPrompt = options.systemPrompt;
    this.fewShot = options.fewShot ?? [];
    this.parser = options.parser ?? new Parser();
    this.rubric = options.rubric ?? new Rubric<S>();
    this.samplingArgs = options.samplingArgs ?? {};
    this.passThreshold = options.passThreshold ?? 1;
  }

  /** The tasks evaluation runs on: the held-out set when there is one. */
  get evaluationTasks(): Task[] {
    return this.evalDataset ?? this.dataset;
  }

  /** The tasks warm-up demonstrations are made on: the demonstration set when there is one, else the training set. */
  get demonstrationTasks(): Task[] {
    return this.demonstrationDataset ?? this.dataset;
  }

  /** The opening messages of a task: its own `prompt`, or system prompt + few-shot + question. */
  formatPrompt(task: Task): Message[] {
    if (task.prompt && task.prompt.length > 0) return structuredClone(task.prompt);
    if (task.question === undefined) throw new Error(`${this.name}: a task needs a prompt or a question`);
    const messages: Message[] = [];
    if (this.systemPrompt) messages.push({ role: 'system', content: this.systemPrompt });
    messages.push(...structuredClone(this.fewShot));
    messages.push({ role: 'user', content: task.question });
    return messages;
  }

  /** Whether a finished rollout counts as a pass: reward ≥ passThreshold, and every function that counts towards the reward scored it (one that threw leaves it unscored; a weight-0 metric does not count). */
  isPassed(trajectory: Trajectory): boolean {
    return trajectory.reward >= this.passThreshold && this.isFullyScored(trajectory);
  }

  /** Whether every function that counts towards the reward scored the rollout (one that threw leaves it unscored): the half of `isPassed` an override with its own pass rule keeps. */
  protected isFullyScored(trajectory: Trajectory): boolean {
    const counted = this.rubric.rewardNames;
    return !trajectory.errors.some((error) => error.source === 'reward' && counted.includes(error.name));
  }

  /**
   * Adds the rubric's group rewards to the finished rollouts of one task (all of its group, in
   * order): each gets the group functions' scores, their weighted sum added to its reward, and
   * their errors. Returns new trajectories; without group functions, the same ones.
   */
  async scoreGroup<T extends Trajectory>(group: T[]): Promise<T[]> {
    if (!this.rubric.hasGroupRewards || group.length === 0) return group;
    const started = globalThis.performance?.now() ?? Date.now();
    const verdicts = await this.rubric.scoreGroup(
      group.map((trajectory) => ({
        prompt: trajectory.prompt,
        completion: trajectory.completion,
        answer: trajectory.answer,
        state: trajectory.state as S,
        info: trajectory.info,
        task: trajectory.task,
        parser: this.parser,
      })),
    );
    const scoringMs = ((globalThis.performance?.now() ?? Date.now()) - started) / group.length;
    return group.map((trajectory, i) => {
      const verdict = verdicts[i]!;
      return {
        ...trajectory,
        reward: trajectory.reward + verdict.reward,
        scores: { ...trajectory.scores, ...verdict.scores },
        errors: [...trajectory.errors, ...verdict.errors],
        timings: { ...trajectory.timings, scoringMs: trajectory.timings.scoringMs + scoringMs, totalMs: trajectory.timings.totalMs + scoringMs },
      };
    });
  }

  /** Runs one rollout of `task` against `client`, scores it, and returns the trajectory. Never throws on model, env or reward errors: they are recorded. */
  abstract rollout(client: ChatClient, task: Task, samplingArgs?: SamplingArgs, options?: RolloutOptions): Promise<Trajectory>;
}
