/**
 * The multi-turn rollout loop: the model speaks, the environment answers, until the environment
 * says the episode is over (`isCompleted`, or one of the named stop conditions) or the turn limit
 * is hit. Why it ended is recorded: `trajectory.stopReason`, `trajectory.stopCondition` (the name of
 * the condition that fired) and `state.stopReason` (either), so rewards and results can see it. The environment always processes the model's
 * final move (`envResponse` runs before `isCompleted`), so a game that ends still updates its state
 * and emits its last feedback, and rewards never read a state the environment did not update.
 */
import { ChatClientError, type ChatClient, type ChatCompletion } from './client.ts';
import { Environment, type EnvironmentOptions, type RolloutOptions } from './environment.ts';
import type { Message, RolloutError, SamplingArgs, State, StopReason, Task, ToolSchema, Trajectory, TurnRecord } from './types.ts';
import { errorMessage } from '../common/error-message.ts';

/** Options of a multi-turn environment. */
export interface MultiTurnEnvOptions<S extends State = State> extends EnvironmentOptions<S> {
  /** The most model turns in one rollout (default 10). */
  maxTurns?: number;
  /** Named predicates checked after each turn (after `envResponse` and `isCompleted`), in order; the first that holds ends the rollout. */
  stopConditions?: StopCondition<S>[];
}

/** A named predicate checked after each turn; when it holds the rollout ends, with its name as the stop reason. */
export interface StopCondition<S extends State = State> {
  name: string;
  check(messages: Message[], state: S): boolean | Promise<boolean>;
}

/** A multi-turn environment: subclass it and override `envResponse` and `isCompleted` (and `setupState` for game state). */
export class MultiTurnEnv<S extends State = State> extends Environment<S> {
  readonly maxTurns: number;
  readonly stopConditions: StopCondition<S>[] = [];

  constructor(options: MultiTurnEnvOptions<S>) {
    super(options);
    this.maxTurns = options.maxTurns ?? 10;
    if (!Number.isInteger(this.maxTurns) || this.maxTurns < 1) throw new Error(`${this.name}: maxTurns must be a positive integer`);
    for (const condition of options.stopConditions ?? []) this.addStopCondition(condition.name, (messages, state) => condition.check(messages, state));
  }

  /** Adds a named stop condition, checked after each turn after the ones before it; returns the environment. */
  addStopCondition(name: string, check: (messages: Message[], state: S) => boolean | Promise<boolean>): this {
    if (!name) throw new Error(`${this.name}: a stop condition needs a name`);
    if (typeof check !== 'function') throw new Error(`${this.name}: stop condition "${name}" needs a check function`);
    if (this.stopConditions.some((condition) => condition.name === name)) throw new Error(`${this.name}: two stop conditions are named "${name}"`);
    this.stopConditions.push({ name, check });
    return this;
  }

  /** Tools offered to the model with every request (none by default). */
  get tools(): ToolSchema[] | undefined {
    return undefined;
  }

  /** Prepares per-rollout state before the first turn; override to set up a game. */
  setupState(state: State): S | Promise<S> {
    return state as S;
  }

  /** The environment's reply to the model's latest message; may update `state`. Default: no reply. */
  envResponse(_messages: Message[], _state: S): Message[] | Promise<Message[]> {
    return [];
  }

  /** Whether the episode is over, checked after each `envResponse`. Default: never (the turn limit ends it). */
  isCompleted(_messages: Message[], _state: S): boolean | Promise<boolean> {
    return false;
  }

  /** Runs the loop, then scores the trajectory with the rubric. */
  async rollout(client: ChatClient, task: Task, samplingArgs: SamplingArgs = {}, options: RolloutOptions = {}): Promise<Trajectory> {
    const started = now();
    const prompt = this.formatPrompt(task);
    const messages: Message[] = structuredClone(prompt);
    const completion: Message[] = [];
    const turns: TurnRecord[] = [];
    const errors: RolloutError[] = [];
    const sampling = { ...this.samplingArgs, ...samplingArgs };
    let stopReason: StopReason = 'max_turns';
    let stopCondition: string | undefined;

    const initial: State = {
      prompt: structuredClone(prompt),
      completion,
      answer: task.answer,
      task: task.task,
      info: structuredClone(task.info ?? {}),
      turn: 0,
      taskIndex: options.taskIndex,
    };
    let state = initial as S;

    const append = (...added: Message[]) => {
      messages.push(...added);
      completion.push(...added);
    };

    loop: try {
      state = await this.setupState(initial);
      while (state.turn < this.maxTurns) {
        if (options.signal?.aborted) {
          stopReason = 'aborted';
          break loop;
        }
        const callStarted = now();
        let response: ChatCompletion;
        try {
          response = await client.chat.completions.create({
            model: options.model ?? 'default',
            messages: structuredClone(messages),
            tools: this.tools,
            signal: options.signal,
            ...sampling,
          });
        } catch (error) {
          const aborted = options.signal?.aborted || (error instanceof ChatClientError && error.kind === 'aborted');
          stopReason = aborted ? 'aborted' : 'error';
          if (!aborted) {
            const fatal = error instanceof ChatClientError && error.fatal;
            errors.push({
              source: 'client',
              name: 'chat.completions.create',
              message: errorMessage(error),
              ...(fatal ? { fatal } : {}),
              ...(error instanceof ChatClientError ? { kind: error.kind } : {}),
            });
          }
          break loop;
        }
        const choice = response.choices[0];
        if (!choice) {
          errors.push({ source: 'client', name: 'chat.completions.create', message: 'the model returned no choices' });
          stopReason = 'error';
          break loop;
        }
        turns.push({
          finishReason: choice.finish_reason,
          latencyMs: now() - callStarted,
          ...(response.usage ? { usage: { prompt_tokens: response.usage.prompt_tokens, completion_tokens: response.usage.completion_tokens } } : {}),
          ...(choice.tokens ? { tokens: choice.tokens } : {}),
        });
        append(normaliseAssistant(choice.message));
        state.turn += 1;

        try {
          append(...(await this.envResponse(messages, state)));
          if (await this.isCompleted(messages, state)) {
            stopReason = choice.finish_reason === 'length' ? 'length' : 'completed';
            break loop;
          }
        } catch (error) {
          errors.push({ source: 'env', name: `${this.name}.envResponse/isCompleted`, message: errorMessage(error) });
          stopReason = 'error';
          break loop;
        }
        for (const condition of this.stopConditions) {
          try {
            if (await condition.check(messages, state)) {
              stopReason = choice.finish_reason === 'length' ? 'length' : 'completed';
              stopCondition = condition.name;
              break loop;
            }
          } catch (error) {
            errors.push({ source: 'env', name: `${this.name}.stopCondition ${condition.name}`, message: errorMessage(error) });
            stopReason = 'error';
            break loop;
          }
        }
      }
    } catch (error) {
      errors.push({ source: 'env', name: `${this.name}.setupState`, message: errorMessage(error) });
      stopReason = 'error';
    }

    state.stopReason = stopCondition ?? stopReason;
    const generationMs = turns.reduce((sum, turn) => sum + turn.latencyMs, 0);
    const scoringStarted = now();
    const verdict = await this.rubric.score({
      prompt,
      completion,
      answer: task.answer,
      state,
      info: state.info,
      task: task.task,
      parser: this.parser,
    });
    const scoringMs = now() - scoringStarted;

    return {
      ...(options.taskIndex !== undefined ? { taskIndex: options.taskIndex } : {}),
      prompt,
      completion,
      answer: task.answer,
      task: task.task,
      info: state.info,
      state,
      reward: verdict.reward,
      scores: verdict.scores,
      ...(verdict.turnRewards ? { turnRewards: verdict.turnRewards } : {}),
      errors: [...errors, ...verdict.errors],
      stopReason,
      ...(stopCondition !== undefined ? { stopCondition } : {}),
      truncated: stopReason === 'max_turns' || stopReason === 'length',
      turns,
      timings: { generationMs, scoringMs, totalMs: now() - started },
    };
  }
}

/** Keeps only the fields of an assistant message that belong in a transcript. */
function normaliseAssistant(message: Message): Message {
  const normalised: Message = { role: 'assistant', content: message.content ?? '' };
  if (message.tool_calls && message.tool_calls.length > 0) normalised.tool_calls = message.tool_calls;
  return normalised;
}

function now(): number {
  return globalThis.performance?.now() ?? Date.now();
}
