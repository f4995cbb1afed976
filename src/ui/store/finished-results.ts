/**
 * What the run card shows of work that ended — the last evaluation (summary, rollouts, failure) and
 * the last warm-up or training job's outcome and note — cleared when what it was about changes
 * (another file opens, another lesson is linked). Work still under way is never touched.
 */
import { IDLE_RUN } from '../features/evaluation/evaluation-slice.ts';
import type { PlaygroundState } from './index.ts';
import { isEvaluating, isTraining } from './selectors.ts';
import { IDLE_JOB } from '../features/training/training-slice.ts';

/** The store change that clears finished results; running or stopping work keeps its state. */
export function finishedResultsCleared(state: Pick<PlaygroundState, 'run' | 'job'>): Partial<Pick<PlaygroundState, 'run' | 'selectedRecord' | 'job'>> {
  return {
    ...(isEvaluating(state) || state.run === IDLE_RUN ? {} : { run: IDLE_RUN, selectedRecord: 0 }),
    ...(isTraining(state) || state.job.status === 'idle' ? {} : { job: IDLE_JOB }),
  };
}
