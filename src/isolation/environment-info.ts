/**
 * The one description of a loaded environment that a host receives (`EnvironmentInfo`), built beside
 * environment code by the browser sandbox and the CLI's QuickJS guest alike, so the two hosts learn
 * the same fields: class, task counts, rewards and group rewards with their weights, metric kinds,
 * pass threshold, tools, the parser's answer template and how many tasks have a planted reference path.
 *
 * It only reads the environment; what the host does with the description is the host's job.
 */
import { MultiTurnEnv, toPlainData, type Environment, type Task, type ToolSchema } from '../envs/index.ts';
import { plantedPathOf } from '../envs/studio/index.ts';
import { ANSWER_PLACEHOLDER, type EnvironmentInfo } from './protocol.ts';

/** What a host learns of `env`, as plain data; `unusedArgWarnings` are the warnings of watchEnvArgs, kept only when there are any. */
export function describeEnvironment(env: Environment, unusedArgWarnings: string[] = []): EnvironmentInfo {
  const { rubric } = env;
  // A hostile or hand-made environment may bring an object that only looks like a Rubric or a Parser.
  const groupRewards = rubric.groupRewards ?? [];
  // Read before the host checks the splits: a split that is not an array counts none here and is named by that check.
  const demonstrationTasks: unknown = env.demonstrationTasks;
  const plantedPaths = Array.isArray(demonstrationTasks) ? demonstrationTasks.filter((task: Task) => plantedPathOf(task) !== undefined).length : 0;
  return {
    name: env.name,
    kind: Object.getPrototypeOf(env)?.constructor?.name ?? 'Environment',
    numTasks: env.dataset.length,
    numEvaluationTasks: env.evaluationTasks.length,
    rewardNames: rubric.rewards.map((reward) => reward.name),
    rewardWeights: rubric.rewards.map((reward) => reward.weight),
    metricKinds: rubric.metricKinds,
    passThreshold: env.passThreshold,
    ...(env instanceof MultiTurnEnv && env.tools ? { tools: toPlainData(env.tools) as ToolSchema[] } : {}),
    ...(typeof env.parser?.formatAnswer === 'function' ? { answerTemplate: String(env.parser.formatAnswer(ANSWER_PLACEHOLDER)) } : {}),
    ...(groupRewards.length > 0 ? { groupRewardNames: groupRewards.map((reward) => reward.name), groupRewardWeights: groupRewards.map((reward) => reward.weight) } : {}),
    ...(unusedArgWarnings.length > 0 ? { unusedArgWarnings } : {}),
    ...(plantedPaths > 0 ? { plantedPaths } : {}),
  };
}
