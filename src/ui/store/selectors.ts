/** Whether something is running, in one place: components select these, actions call them on `getState()`. */
import type { PlaygroundState } from './index.ts';

/** An evaluation is compiling, running or stopping. */
export function isEvaluating(state: Pick<PlaygroundState, 'run'>): boolean {
  return state.run.status === 'compiling' || state.run.status === 'running' || state.run.status === 'stopping';
}

/** A warm-up or GRPO job is running or stopping. */
export function isTraining(state: Pick<PlaygroundState, 'job'>): boolean {
  return state.job.status === 'running' || state.job.status === 'stopping';
}

/** An evaluation or a training job is under way: no other may start, and the model or run may not change. */
export function isBusy(state: Pick<PlaygroundState, 'run' | 'job'>): boolean {
  return isEvaluating(state) || isTraining(state);
}
