/** Learning-rate schedules: linear warm-up, then constant or cosine decay to a floor. */

/** A learning-rate schedule. */
export interface LearningRateSchedule {
  /** Peak learning rate. */
  lr: number;
  /** Steps of linear warm-up from lr/warmupSteps to lr (default 0). */
  warmupSteps?: number;
  /** 'constant' after warm-up, or 'cosine' decay to minLrRatio·lr at totalSteps (default 'constant'). */
  kind?: 'constant' | 'cosine';
  totalSteps?: number;
  /** Floor of the cosine, as a fraction of lr (default 0.1). */
  minLrRatio?: number;
}

/** The learning rate of 0-based `step`. */
export function learningRateAt(step: number, schedule: LearningRateSchedule): number {
  const { lr, warmupSteps = 0, kind = 'constant', minLrRatio = 0.1 } = schedule;
  if (step < warmupSteps) return (lr * (step + 1)) / warmupSteps;
  if (kind === 'constant') return lr;
  const total = schedule.totalSteps;
  if (total === undefined || total <= warmupSteps) throw new Error('learningRateAt: a cosine schedule needs totalSteps greater than warmupSteps');
  const progress = Math.min(1, (step - warmupSteps) / Math.max(1, total - warmupSteps - 1));
  return lr * (minLrRatio + (1 - minLrRatio) * 0.5 * (1 + Math.cos(Math.PI * progress)));
}
