/** The busy selectors: which run and job statuses count as evaluating, training and busy. */
import { describe, expect, test } from 'vitest';
import { isBusy, isEvaluating, isTraining } from '../../../src/ui/store/selectors.ts';
import { IDLE_RUN, type RunStatus } from '../../../src/ui/features/evaluation/evaluation-slice.ts';
import { IDLE_JOB, type TrainingJob } from '../../../src/ui/features/training/training-slice.ts';

const run = (status: RunStatus) => ({ ...IDLE_RUN, status });
const job = (status: TrainingJob['status']) => ({ ...IDLE_JOB, status });

describe('busy selectors', () => {
  test('an evaluation is under way while compiling, running or stopping', () => {
    expect((['idle', 'compiling', 'running', 'stopping', 'done', 'failed'] as const).map((status) => isEvaluating({ run: run(status) }))).toEqual([false, true, true, true, false, false]);
  });

  test('a job is under way while running or stopping; busy is either', () => {
    expect((['idle', 'running', 'stopping', 'done', 'failed'] as const).map((status) => isTraining({ job: job(status) }))).toEqual([false, true, true, false, false]);
    expect(isBusy({ run: run('done'), job: job('done') })).toBe(false);
    expect(isBusy({ run: run('compiling'), job: job('idle') })).toBe(true);
    expect(isBusy({ run: run('idle'), job: job('stopping') })).toBe(true);
  });
});
