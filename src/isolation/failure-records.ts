/**
 * The records a host writes when environment code fails to give its own: a rollout that hung,
 * crashed or was refused (`failedTrajectory`), a group whose reward functions did not finish
 * (`groupFailureScore`), and a finished rollout too large to send back (`oversizedTrajectory`).
 * Each keeps what a person reading the run needs (the task, the prompt, which function failed and
 * why) and scores 0, so a failure is a rollout's error and never the run's silence.
 *
 * These build data only; deciding who is to blame and whether to run again is the host's job.
 */
import type { Environment, RolloutOptions, RubricScore, State, Task, Trajectory } from '../envs/index.ts';
import type { SandboxTrajectory } from './protocol.ts';

/** The verdict on a group whose reward functions `names` did not finish: each scores 0 with `message` as its error. */
export function groupFailureScore(names: readonly string[], message: string): RubricScore {
  return {
    reward: 0,
    scores: Object.fromEntries(names.map((name) => [name, 0])),
    errors: names.map((name) => ({ source: 'reward' as const, name, message: `the group reward functions did not finish: ${message}` })),
  };
}

/** `trajectory` with a group verdict added: its reward and scores, and its errors after the rollout's own. */
export function withGroupScore<T extends Trajectory>(trajectory: T, verdict: RubricScore): T {
  return { ...trajectory, reward: trajectory.reward + verdict.reward, scores: { ...trajectory.scores, ...verdict.scores }, errors: [...trajectory.errors, ...verdict.errors] };
}

/** A rollout of `task` that environment code never returned: no completion, every reward 0, and `message` as an error of `source` (marked a timeout when it was one). */
export function failedTrajectory(env: Environment, task: Task, options: RolloutOptions, failure: { source: string; message: string; timeout: boolean; elapsedMs: number }): Trajectory {
  const prompt = task.prompt ?? (task.question !== undefined ? env.formatPrompt(task) : []);
  const info = task.info ?? {};
  const state: State = {
    prompt,
    completion: [],
    info,
    turn: 0,
    ...(task.answer !== undefined ? { answer: task.answer } : {}),
    ...(task.task !== undefined ? { task: task.task } : {}),
    ...(options.taskIndex !== undefined ? { taskIndex: options.taskIndex } : {}),
  };
  return {
    ...(options.taskIndex !== undefined ? { taskIndex: options.taskIndex } : {}),
    prompt,
    completion: [],
    ...(task.answer !== undefined ? { answer: task.answer } : {}),
    ...(task.task !== undefined ? { task: task.task } : {}),
    info,
    state,
    reward: 0,
    scores: Object.fromEntries(env.rubric.rewards.map((reward) => [reward.name, 0])),
    errors: [{ source: 'env', name: failure.source, message: failure.message, ...(failure.timeout ? { kind: 'timeout' } : {}) }],
    stopReason: options.signal?.aborted ? 'aborted' : 'error',
    truncated: false,
    turns: [],
    timings: { generationMs: 0, scoringMs: 0, totalMs: failure.elapsedMs },
  };
}

/** A finished rollout whose transcript and state were too large to send: its verdict (reward, scores, pass) kept, its conversation replaced by a note, and why as an error of `source`. */
export function oversizedTrajectory(trajectory: SandboxTrajectory, source: string, message: string): SandboxTrajectory {
  const note = [{ role: 'user' as const, content: `[removed by tabrl: ${message}]` }];
  const errors = [...trajectory.errors, { source: 'env' as const, name: source, message }];
  const state = { prompt: [], completion: note, info: {}, turn: trajectory.state.turn };
  return { ...trajectory, prompt: [], completion: note, info: {}, state, turns: [], errors };
}
