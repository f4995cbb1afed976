/**
 * The training run's rollouts as the Audit panel reads them: each GRPO step's rollouts, kept in
 * memory with their step (the last `MAX_KEPT`), so reward-up-while-a-metric-falls and length drift
 * can be seen across steps. A leaf module: the training actions feed it, the studio reads it.
 */
import { completionText, type Message, type MetricKind } from '../../../envs/index.ts';
import { type AuditRollout } from '../../../envs/studio/index.ts';
import { actionState } from '../../store/action-state.ts';

/** How many rollouts are kept (the oldest go first). */
export const MAX_KEPT = 4000;

/** A training rollout as the engine reports it (the fields the audit uses). */
export interface TrainingRolloutLike {
  taskIndex: number;
  prompt: Message[];
  completion: Message[];
  reward: number;
  scores: Record<string, number>;
}

/** How an audit reads the scores: the reward functions' weights and what each weight-0 score means. */
export interface AuditScoring {
  weights: Record<string, number>;
  metrics: Record<string, MetricKind>;
}

/** What an environment's rubric tells the audit (the fields of the sandbox's EnvironmentInfo it needs). */
export interface RubricInfoLike {
  rewardNames: string[];
  rewardWeights: number[];
  groupRewardNames?: string[];
  groupRewardWeights?: number[];
  metricKinds?: Record<string, MetricKind>;
}

/** The weights of every reward function (group ones included) and the declared metric kinds, for `audit()`. */
export function auditScoring(info: RubricInfoLike): AuditScoring {
  const weights = Object.fromEntries([
    ...info.rewardNames.map((name, i) => [name, info.rewardWeights[i] ?? 1] as const),
    ...(info.groupRewardNames ?? []).map((name, i) => [name, info.groupRewardWeights?.[i] ?? 1] as const),
  ]);
  return { weights, metrics: { ...(info.metricKinds ?? {}) } };
}

/** The kept rollouts, the environment they came from, how to read their scores, and who listens. */
const memory = actionState(() => ({ kept: [] as AuditRollout[], environment: null as string | null, scoring: null as AuditScoring | null, listeners: new Set<() => void>() }));

/** Keeps one step's rollouts of the run on `environmentName` (a run on another environment starts a fresh list); `scoring` says how the audit reads their scores. */
export function rememberTrainingRollouts(environmentName: string, step: number, rollouts: readonly TrainingRolloutLike[], scoring?: AuditScoring): void {
  if (memory.environment !== environmentName) {
    memory.environment = environmentName;
    memory.kept = [];
  }
  memory.scoring = scoring ?? null;
  const perTask = new Map<number, number>();
  for (const rollout of rollouts) {
    const rolloutIndex = perTask.get(rollout.taskIndex) ?? 0;
    perTask.set(rollout.taskIndex, rolloutIndex + 1);
    memory.kept.push({
      id: `${step}:${rollout.taskIndex}:${rolloutIndex}`,
      taskIndex: rollout.taskIndex,
      rolloutIndex,
      step,
      question: [...rollout.prompt].reverse().find((message) => message.role === 'user')?.content ?? '',
      completion: completionText(rollout.completion),
      reward: rollout.reward,
      scores: rollout.scores,
    });
  }
  if (memory.kept.length > MAX_KEPT) memory.kept = memory.kept.slice(memory.kept.length - MAX_KEPT);
  for (const listener of memory.listeners) listener();
}

/** The kept training rollouts, the environment they came from and how to read their scores (null when the run did not say). */
export function trainingRollouts(): { environment: string | null; rollouts: readonly AuditRollout[]; scoring: AuditScoring | null } {
  return { environment: memory.environment, rollouts: memory.kept, scoring: memory.scoring };
}

/** Calls `listener` whenever rollouts are added; returns the unsubscribe. */
export function onTrainingRollouts(listener: () => void): () => void {
  memory.listeners.add(listener);
  return () => memory.listeners.delete(listener);
}
