/**
 * The evaluation actions over faked bridges (sandbox, Monaco's compiler, the policy): an evaluation
 * runs through the one job runner, so it loads the open file's compiled code with the panel's
 * arguments, streams records into the run, and ends as done, stopped (keeping what it made), stopped
 * while loading, stopped before it began, or failed; Pause holds new rollouts; `resetActionState`
 * gives the next case a clean start. No worker, iframe or DOM is involved.
 */
import { beforeEach, describe, expect, test, vi } from 'vitest';
import { createStore } from 'zustand/vanilla';
import type { ChatClient, RolloutRecord } from '../../../src/envs/index.ts';
import type { PlaygroundState } from '../../../src/ui/store/index.ts';
import { createEditorSlice } from '../../../src/ui/features/environment/editor-slice.ts';
import { createEvaluationSlice, IDLE_RUN } from '../../../src/ui/features/evaluation/evaluation-slice.ts';
import { createPolicySlice } from '../../../src/ui/features/policy/policy-slice.ts';
import { createTrainingSlice } from '../../../src/ui/features/training/training-slice.ts';
import { createTransferSlice } from '../../../src/ui/features/transfer/transfer-slice.ts';
import { createJudgeSlice } from '../../../src/ui/features/judge/judge-slice.ts';
import { createSimulatorSlice } from '../../../src/ui/features/judge/simulator-slice.ts';

const store = createStore<PlaygroundState>()(((...args: Parameters<typeof createPolicySlice>) => ({
  ...createEditorSlice(...args), ...createPolicySlice(...args), ...createEvaluationSlice(...args), ...createTrainingSlice(...args), ...createTransferSlice(...args), ...createJudgeSlice(...args), ...createSimulatorSlice(...args),
})) as never);

/** A rollout record of task `taskIndex` with `reward` (1 passes). */
function record(taskIndex: number, reward: number): RolloutRecord {
  return {
    taskIndex, rolloutIndex: 0, passed: reward >= 1, prompt: [], completion: [{ role: 'assistant', content: 'x' }], info: {}, state: {},
    reward, scores: { exact: reward }, errors: [], stopReason: 'completed', truncated: false, turns: [], timings: { generationMs: 0, scoringMs: 0, totalMs: 0 },
  } as unknown as RolloutRecord;
}

/** How the fake sandbox behaves in the case at hand. */
/** `item` with the reward function `name` failed with `message` (its score 0, as the rubric scores a failure). */
function rewardFailed(item: RolloutRecord, name: string, message: string): RolloutRecord {
  return { ...item, scores: { ...item.scores, [name]: 0 }, errors: [...item.errors, { source: 'reward', name, message }] };
}

const sandbox = {
  /** Every session opened: its request, and whether it was stopped and disposed of. */
  opened: [] as { code: string; label: string; args: Record<string, unknown>; stopped: boolean; disposed: boolean }[],
  /** Records the next evaluate streams before it settles. */
  records: [] as RolloutRecord[],
  /** When set, loading waits for Stop and then fails the way the real bridge does. */
  hangWhileLoading: false,
  /** When set, evaluate streams its records and then waits for Stop (and rejects as a stopped sandbox does). */
  hangAfterRecords: false,
  /** The client each session got, so a case can call it (Pause holds its calls). */
  client: null as ChatClient | null,
  /** When set, loading fails with this message, as the bridge does when loadEnvironment(args) throws. */
  loadError: null as string | null,
};
const compiles: string[] = [];
let compileFails = false;
let compileStarted: () => void = () => {};
let holdCompile: Promise<void> = Promise.resolve();
const recorded: unknown[] = [];

vi.mock('../../../src/ui/store/index.ts', () => ({ usePlayground: store }));
vi.mock('../../../src/ui/features/environment/monaco-setup.ts', () => ({
  compileModel: async (model: { getValue(): string }) => {
    compiles.push(model.getValue());
    compileStarted();
    await holdCompile;
    return compileFails ? { ok: false, problems: [{ line: 3, message: "Cannot find name 'x'." }] } : { ok: true, code: `compiled:${model.getValue()}` };
  },
}));
vi.mock('../../../src/ui/features/environment/editor-models.ts', () => ({ environmentModel: (_id: string, source: string) => ({ getValue: () => source }) }));
vi.mock('../../../src/ui/features/jobs/sandbox-frame.ts', () => ({ createIframeSandbox: async () => ({}) }));
vi.mock('../../../src/ui/features/policy/policy-actions.ts', () => ({
  buildPolicyClient: async () => ({ model: 'fake-policy', client: { chat: { completions: { create: async () => ({ choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }] }) } } } }),
}));
vi.mock('../../../src/ui/features/training/training-actions.ts', () => ({ recordEvaluation: async (summary: unknown) => { recorded.push(summary); } }));
vi.mock('../../../src/workers/sandbox-bridge.ts', () => {
  class SandboxStoppedError extends Error {
    constructor(readonly environmentName: string) {
      super(`Stopped while the environment "${environmentName}" was loading; the sandbox was shut down and nothing ran.`);
    }
  }
  return {
    SandboxStoppedError,
    openSandbox: async (request: { code: string; label: string; args: Record<string, unknown>; client: ChatClient; signal: AbortSignal }) => {
      const entry = { code: request.code, label: request.label, args: request.args, stopped: false, disposed: false };
      sandbox.opened.push(entry);
      sandbox.client = request.client;
      if (sandbox.loadError !== null) throw new Error(sandbox.loadError);
      if (sandbox.hangWhileLoading) {
        await new Promise((resolve) => request.signal.addEventListener('abort', resolve, { once: true }));
        throw new SandboxStoppedError(request.label);
      }
      let release: () => void = () => {};
      return {
        info: { name: 'reverse-text', numTasks: 10, numEvaluationTasks: 2, rewardNames: ['exact', 'length'], rewardWeights: [1, 0], tools: undefined },
        evaluate: async (_options: unknown, onRecord: (record: RolloutRecord, done: number, total: number) => void) => {
          sandbox.records.forEach((item, index) => onRecord(item, index + 1, 2));
          if (sandbox.hangAfterRecords) {
            await new Promise<void>((resolve) => { release = resolve; });
            throw new Error('the sandbox was stopped');
          }
          return {};
        },
        rollout: async () => { throw new Error('not used'); },
        stop: () => {
          entry.stopped = true;
          release();
        },
        dispose: () => { entry.disposed = true; },
      };
    },
  };
});

const { startEvaluation, stopEvaluation, pauseEvaluation, resumeEvaluation } = await import('../../../src/ui/features/evaluation/evaluation-actions.ts');
const { resetActionState } = await import('../../../src/ui/store/action-state.ts');

beforeEach(() => {
  resetActionState();
  Object.assign(sandbox, { opened: [], records: [], hangWhileLoading: false, hangAfterRecords: false, client: null, loadError: null });
  compiles.length = 0;
  recorded.length = 0;
  compileFails = false;
  holdCompile = Promise.resolve();
  compileStarted = () => {};
  store.getState().updateRun({ ...IDLE_RUN });
  store.getState().setPolicy('expert');
  store.getState().setEnvironments([{ id: 'a', name: 'reverse-text', source: 'SOURCE-A', builtin: 'reverse-text', updatedAt: 0 }]);
  store.getState().setCurrentId('a');
  store.getState().setSettings({ argsJson: '{"numTasks":7}', numTasks: 2, rolloutsPerTask: 1 });
});

/** Resolves once the fake sandbox has been opened `count` times. */
async function sandboxOpened(count = 1): Promise<void> {
  await vi.waitFor(() => expect(sandbox.opened.length).toBeGreaterThanOrEqual(count));
}

describe('evaluation actions: one job runner for the evaluation', () => {
  test('evaluates the open file\'s compiled code with the panel\'s arguments; records in task order, a summary, the sandbox disposed of', async () => {
    sandbox.records = [record(1, 0), record(0, 1)];
    await startEvaluation();
    const { run } = store.getState();
    expect(run).toMatchObject({ status: 'done', failure: null, stoppedEarly: null, done: 2, total: 2 });
    expect(sandbox.opened).toEqual([{ code: 'compiled:SOURCE-A', label: 'reverse-text', args: { numTasks: 7 }, stopped: false, disposed: true }]);
    expect(run.records.map((item) => item.taskIndex)).toEqual([0, 1]);
    expect(run.summary).toMatchObject({ numRollouts: 2, passRate: 0.5, scores: { exact: 0.5 } });
    expect(recorded).toEqual([]); // not the in-tab model: no run records it
  });

  test('a compile error fails the evaluation before any sandbox starts, and says where', async () => {
    compileFails = true;
    await startEvaluation();
    expect(store.getState().run).toMatchObject({ status: 'failed', failure: "1 compile error — fix it first. Line 3: Cannot find name 'x'." });
    expect(sandbox.opened).toEqual([]);
  });

  test("an environment that refuses its arguments fails the evaluation with the loader's message, word for word", async () => {
    sandbox.loadError = 'reverse-text: numTasks must be a whole number ≥ 0, got "x"';
    await startEvaluation();
    expect(store.getState().run).toMatchObject({ status: 'failed', failure: 'reverse-text: numTasks must be a whole number ≥ 0, got "x"', records: [] });
  });

  test('Stop while compiling ends it before anything runs', async () => {
    let release: () => void = () => {};
    holdCompile = new Promise((resolve) => { release = resolve; });
    const started = new Promise<void>((resolve) => { compileStarted = resolve; });
    const running = startEvaluation();
    await started;
    expect(store.getState().run.status).toBe('compiling');
    stopEvaluation();
    release();
    await running;
    expect(store.getState().run).toMatchObject({ status: 'failed', failure: 'Stopped before the evaluation began; nothing ran.' });
    expect(sandbox.opened).toEqual([]);
  });

  test('Stop while the environment loads fails it with the sandbox\'s words; the next evaluation runs', async () => {
    sandbox.hangWhileLoading = true;
    const running = startEvaluation();
    await sandboxOpened();
    stopEvaluation();
    expect(store.getState().run.status).toBe('stopping');
    await running;
    expect(store.getState().run).toMatchObject({ status: 'failed', failure: 'Stopped while the environment "reverse-text" was loading; the sandbox was shut down and nothing ran.' });

    sandbox.hangWhileLoading = false;
    sandbox.records = [record(0, 1)];
    await startEvaluation();
    expect(store.getState().run).toMatchObject({ status: 'done', failure: null });
  });

  test('Stop while rollouts run stops the sandbox and keeps the records made so far, summarised', async () => {
    sandbox.records = [record(0, 1)];
    sandbox.hangAfterRecords = true;
    const running = startEvaluation();
    await vi.waitFor(() => expect(store.getState().run.records).toHaveLength(1));
    stopEvaluation();
    await running;
    expect(sandbox.opened[0]).toMatchObject({ stopped: true, disposed: true });
    expect(store.getState().run).toMatchObject({ status: 'done', stoppedEarly: 'cancelled', summary: { numRollouts: 1, passRate: 1 } });
  });

  test('Pause holds the policy\'s new calls until Resume; the run\'s clock leaves the pause out', async () => {
    sandbox.hangAfterRecords = true;
    const running = startEvaluation();
    await sandboxOpened();
    await vi.waitFor(() => expect(store.getState().run.status).toBe('running'));
    const startedAt = store.getState().run.startedAt;
    pauseEvaluation();
    expect(store.getState().run.pausedAt).toBeTypeOf('number');
    let answered = false;
    const call = sandbox.client!.chat.completions.create({ model: 'fake-policy', messages: [] }).then(() => { answered = true; });
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(answered).toBe(false);
    resumeEvaluation();
    await call;
    expect(answered).toBe(true);
    expect(store.getState().run.startedAt).toBeGreaterThanOrEqual(startedAt + 25);
    stopEvaluation();
    await running;
    expect(store.getState().run.pausedAt).toBeUndefined();
  });

  test('every weighted reward function failing in every rollout fails the evaluation, naming it and its first error; the summary and rollouts stay, unrecorded', async () => {
    store.getState().setPolicy('in-tab');
    sandbox.records = [rewardFailed(record(1, 0), 'exact', 'answer is undefined'), rewardFailed(record(0, 0), 'exact', "Cannot read properties of undefined (reading 'trim')")];
    await startEvaluation();
    const { run } = store.getState();
    expect(run).toMatchObject({ status: 'failed', summary: { numRollouts: 2, rolloutsWithErrors: 2 } });
    expect(run.failure).toBe(
      "The evaluation measured nothing: the reward function exact failed in every rollout, so the rewards are not measurements; the first error: Cannot read properties of undefined (reading 'trim'). Fix the reward function and evaluate again; the rollouts are kept to debug it.",
    );
    expect(run.records.map((item) => item.taskIndex)).toEqual([0, 1]);
    expect(recorded).toEqual([]); // the in-tab model's run does not keep it among its evaluations
  });

  test('a weighted reward failing in some rollouts only, or only a weight-0 metric failing everywhere, is a measurement: done and recorded', async () => {
    store.getState().setPolicy('in-tab');
    sandbox.records = [rewardFailed(record(0, 0), 'exact', 'boom'), record(1, 1)];
    await startEvaluation();
    expect(store.getState().run).toMatchObject({ status: 'done', failure: null, summary: { numRollouts: 2, passRate: 0.5 } });
    expect(recorded).toHaveLength(1);

    sandbox.records = [rewardFailed(record(0, 1), 'length', 'boom'), rewardFailed(record(1, 0), 'length', 'boom')];
    await startEvaluation();
    expect(store.getState().run).toMatchObject({ status: 'done', failure: null });
  });

  test('after resetActionState no evaluation is running: Stop does nothing', () => {
    store.getState().updateRun({ status: 'running' });
    resetActionState();
    stopEvaluation();
    expect(store.getState().run.status).toBe('running');
  });
});
