/**
 * The tab's task pool across the sandbox and the engine, in Node over a real comlink MessageChannel:
 * the sandbox hands out its environment's training tasks (checked: anything that is not a task stops
 * it with a clear error) and rolls out a task the app gives it; the engine's rollout source draws
 * from the pool as it stands and tags each drawn task with the pool's version, so a rollout sampled
 * before a refresh still asks for the task it was drawn from.
 */
import { describe, expect, test, vi } from 'vitest';
import { completionText, Rubric, ScriptedClient, SingleTurnEnv, type RewardContext, type Task } from '../../../src/envs/index.ts';
import { sandboxRolloutSource } from '../../../src/workers/engine/sandbox-rollouts.ts';
import { PauseGate } from '../../../src/workers/engine/pause-gate.ts';
import { inProcessSandboxFrame } from '../../support/in-process-sandbox-frame.ts';

vi.mock('virtual:tabrl-sandbox-runtime', () => ({ default: '/* the runtime is faked in Node */' }));
const { openSandbox } = await import('../../../src/workers/sandbox-bridge.ts');

const exact = (ctx: RewardContext) => (completionText(ctx.completion).includes(ctx.answer ?? '\u0000') ? 1 : 0);
/** A policy that answers 1948 to everything. */
const says1948 = new ScriptedClient(() => 'Answer: 1948');
const TASKS: Task[] = [
  { question: 'In which year was the battle of Hastings?', answer: '1066' },
  { question: 'In which year was the battle of Waterloo?', answer: '1815' },
];

describe('the sandbox and a task pool the app keeps', () => {
  test('hands out its training tasks, and rolls out a task it is given instead of its own', async () => {
    const session = await openSandbox({
      code: 'env',
      label: 'years',
      args: {},
      client: says1948,
      timeLimitMs: 5_000,
      createFrame: inProcessSandboxFrame(() => new SingleTurnEnv({ name: 'years', dataset: TASKS, rubric: new Rubric({ funcs: [exact] }) })),
    });
    expect(await session.trainingTasks()).toEqual(TASKS);
    const given = { question: 'In which year did the radio mast go up?', answer: '1948' };
    const trajectory = await session.rollout(0, { seed: 1 }, 'policy', given);
    expect(trajectory.prompt.at(-1)?.content).toBe(given.question);
    expect(trajectory).toMatchObject({ passed: true, reward: 1, taskIndex: 0 });
    const own = await session.rollout(0, { seed: 1 }, 'policy');
    expect(own.prompt.at(-1)?.content).toBe(TASKS[0]!.question);
    expect(own.passed).toBe(false);
    session.dispose();
  });

  test('training tasks that are not tasks stop the sandbox with a clear error', async () => {
    const session = await openSandbox({
      code: 'env',
      label: 'odd',
      args: {},
      client: says1948,
      timeLimitMs: 5_000,
      createFrame: inProcessSandboxFrame(() => new SingleTurnEnv({ name: 'odd', dataset: [42 as unknown as Task], rubric: new Rubric({ funcs: [exact] }) })),
    });
    await expect(session.trainingTasks()).rejects.toThrow(/Environment "odd" was stopped: the environment's sandbox returned invalid data \(a training task without a question or a prompt\)/);
  });
});

describe("the engine's rollout source and the app's pool versions", () => {
  test('a task drawn before a refresh keeps its version; the pool size is read at each draw', async () => {
    const asked: [number, number | undefined][] = [];
    const source = sandboxRolloutSource({
      name: 'years',
      numTasks: 2,
      rollout: async (taskIndex, _samplingArgs, poolVersion) => {
        asked.push([taskIndex, poolVersion]);
        return { prompt: [], completion: [], turns: [], errors: [], info: {}, state: {}, reward: 0, rewards: {}, passed: false, truncated: false, stopReason: 'completed', timings: { generationMs: 0, scoringMs: 0, totalMs: 0 } } as never;
      },
      signal: new AbortController().signal,
      pauseGate: new PauseGate(),
    });
    expect(source.numTasks).toBe(2);
    const before = source.taskAt!(1);
    source.newPool(3);
    expect(source.numTasks).toBe(3);
    const after = source.taskAt!(2);
    await source.rollout(1, {}, { step: 4, task: before });
    await source.rollout(2, {}, { step: 5, task: after });
    expect(asked).toEqual([
      [1, undefined],
      [2, 1],
    ]);
  });
});
