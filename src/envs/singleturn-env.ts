/** A single-turn environment: one prompt, one reply, then scoring. */
import { MultiTurnEnv, type MultiTurnEnvOptions } from './multiturn-env.ts';
import type { Message, State } from './types.ts';

/** Options of a single-turn environment (the turn limit is always 1). */
export type SingleTurnEnvOptions<S extends State = State> = Omit<MultiTurnEnvOptions<S>, 'maxTurns'>;

/** One question, one answer: the episode ends after the model's first reply. */
export class SingleTurnEnv<S extends State = State> extends MultiTurnEnv<S> {
  constructor(options: SingleTurnEnvOptions<S>) {
    super({ ...options, maxTurns: 1 });
  }

  /** Always done after the model's reply. */
  override isCompleted(_messages: Message[], _state: S): boolean {
    return true;
  }
}
