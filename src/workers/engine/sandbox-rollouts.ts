/**
 * GRPO's rollout source in the engine worker: each training rollout, and each finished group's
 * group rewards, are asked of the app (which asks its sandbox, where environment code runs) through
 * proxied callbacks. It keeps each step's scored rollouts for the rollout viewer, group-scored ones
 * in place of their unscored versions. The pause gate holds new rollouts; a stopped job starts none.
 */
import type { RolloutSource, ScoredTrajectory } from '../../rl/grpo-trainer.ts';
import type { EngineRolloutFunction, EngineScoreGroupFunction } from './protocol.ts';
import type { PauseGate } from './pause-gate.ts';

/** A rollout source over the app's sandbox that also hands out each step's rollouts for the viewer. */
export interface SandboxRolloutSource extends RolloutSource {
  /** Keeps `trajectories` as step `step`'s rollouts (restored ones sampled ahead). */
  keepStep(step: number, trajectories: ScoredTrajectory[]): void;
  /** Step `step`'s rollouts (group-scored when the environment has group rewards), forgotten once taken. */
  takeStep(step: number): ScoredTrajectory[];
  /** The app's task pool changed to `numTasks` tasks (its next version): steps sampled from now on draw from it; rollouts drawn before keep their version. */
  newPool(numTasks: number): void;
}

/** What the source is made of: the app's callbacks, the job's stop signal and the pause gate. */
export interface SandboxRolloutSourceOptions {
  name: string;
  numTasks: number;
  rollout: EngineRolloutFunction;
  /** Present when the environment has group rewards. */
  scoreGroup?: EngineScoreGroupFunction;
  signal: AbortSignal;
  pauseGate: Pick<PauseGate, 'wait'>;
  /** The weight of each reward function, by name (RolloutSource.rewardWeights): with them, a step whose weighted functions all failed in every rollout fails the job. */
  rewardWeights?: Readonly<Record<string, number>>;
}

/** GRPO's rollouts and group scores, asked of the app's sandbox. */
export function sandboxRolloutSource({ name, numTasks, rollout, scoreGroup, signal, pauseGate, rewardWeights }: SandboxRolloutSourceOptions): SandboxRolloutSource {
  const byStep = new Map<number, ScoredTrajectory[]>();
  /** The app's pool version (0 until it first changes) and its size; a drawn task carries the version it came from. */
  let poolVersion = 0;
  let poolSize = numTasks;
  /** The step each rollout was sampled for, so a group-scored copy replaces it in the viewer's list. */
  const stepOf = new WeakMap<ScoredTrajectory, number>();
  return {
    name,
    get numTasks() {
      return poolSize;
    },
    ...(rewardWeights ? { rewardWeights } : {}),
    // Only the pool's version travels with a drawn task: the app holds the tasks themselves.
    taskAt: () => ({ info: { poolVersion } }),
    async rollout(taskIndex, samplingArgs, { step, task }) {
      await pauseGate.wait(signal);
      if (signal.aborted) throw new Error('stopped');
      const drawnFrom = task?.info?.poolVersion;
      const trajectory = await (typeof drawnFrom === 'number' && drawnFrom > 0 ? rollout(taskIndex, samplingArgs, drawnFrom) : rollout(taskIndex, samplingArgs));
      stepOf.set(trajectory, step);
      byStep.set(step, [...(byStep.get(step) ?? []), trajectory]);
      return trajectory;
    },
    ...(scoreGroup
      ? {
          async scoreGroup(group: ScoredTrajectory[]) {
            if (signal.aborted) throw new Error('stopped');
            const scored = await scoreGroup(group);
            if (scored.length !== group.length) throw new Error(`the sandbox scored ${scored.length} rollouts of a group of ${group.length}`);
            group.forEach((original, i) => {
              const step = stepOf.get(original);
              const kept = step === undefined ? undefined : byStep.get(step);
              const at = kept?.indexOf(original) ?? -1;
              if (kept && at >= 0) kept[at] = scored[i]!;
            });
            return scored;
          },
        }
      : {}),
    newPool(size) {
      poolVersion += 1;
      poolSize = size;
    },
    keepStep(step, trajectories) {
      byStep.set(step, trajectories);
    },
    takeStep(step) {
      const found = byStep.get(step) ?? [];
      byStep.delete(step);
      return found;
    },
  };
}
