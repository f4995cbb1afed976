/**
 * The work done beside environment code for a host, the same in the browser sandbox and the CLI's
 * QuickJS guest: find the task a host names, run one rollout with a client whose calls cross to the
 * host, and score a finished group with the rubric's group rewards, each returned as plain data
 * with the environment's verdict. An environment whose own scoreGroup throws gets the failure record
 * on every rollout of the group instead (failure-records.ts).
 *
 * It holds no state and no transport: ids, messages, time limits and cancellation are the host side's.
 */
import { toPlainData, type ChatClient, type Environment, type RolloutOptions, type SamplingArgs, type Task } from '../envs/index.ts';
import { errorMessage } from '../common/error-message.ts';
import { groupFailureScore, withGroupScore } from './failure-records.ts';
import type { SandboxTrajectory, TaskReference } from './protocol.ts';

/** The task `reference` names in `env`; throws, saying what exists, when there is none. */
export function taskOf(env: Environment, reference: TaskReference): Task {
  if ('task' in reference) return reference.task;
  const tasks = reference.split === 'train' ? env.dataset : reference.split === 'eval' ? env.evaluationTasks : env.demonstrationTasks;
  const task = tasks[reference.index];
  if (!task) throw new Error(`${env.name} has no ${SPLIT_NAMES[reference.split]} task ${reference.index} (it has ${tasks.length})`);
  return task;
}

const SPLIT_NAMES = { train: 'training', eval: 'evaluation', demonstration: 'demonstration' } as const;

/** Rolls `task` out once with `client` and returns the trajectory as plain data, with `taskIndex` when given and the environment's pass verdict. */
export async function runRollout(env: Environment, task: Task, client: ChatClient, samplingArgs: SamplingArgs | undefined, options: RolloutOptions): Promise<SandboxTrajectory> {
  const trajectory = await env.rollout(client, task, samplingArgs, options);
  return toPlainData({ ...trajectory, ...(options.taskIndex !== undefined ? { taskIndex: options.taskIndex } : {}), passed: env.isPassed(trajectory) }) as SandboxTrajectory;
}

/**
 * Adds the rubric's group rewards to one task's finished rollouts, in order, as plain data with each
 * rollout's verdict. Never throws on a reward's error: the rubric records a throwing function itself,
 * and an environment whose own scoreGroup throws gets every group function scored 0 with the error
 * on each rollout, which then does not pass.
 */
export async function scoreGroupOf(env: Environment, group: SandboxTrajectory[]): Promise<SandboxTrajectory[]> {
  if (!env.rubric.hasGroupRewards || group.length === 0) return group;
  try {
    const scored = await env.scoreGroup(group);
    return toPlainData(scored.map((trajectory) => ({ ...trajectory, passed: env.isPassed(trajectory) }))) as SandboxTrajectory[];
  } catch (error) {
    const verdict = groupFailureScore(
      env.rubric.groupRewards.map((reward) => reward.name),
      errorMessage(error),
    );
    return toPlainData(group.map((trajectory) => ({ ...withGroupScore(trajectory, verdict), passed: false }))) as SandboxTrajectory[];
  }
}
