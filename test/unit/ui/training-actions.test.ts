/**
 * The training actions over faked bridges (engine, sandbox, Monaco's compiler, run storage): a run
 * is bound to its environment. Continuing an unfinished GRPO job after switching to another file
 * runs the run's own code, arguments and settings and says so; a new job on the run with changed
 * code asks first, and nothing starts when the person declines. No worker, GPU or DOM is involved.
 */
import { beforeAll, describe, expect, test, vi } from 'vitest';
import { createStore } from 'zustand/vanilla';
import type { PlaygroundState } from '../../../src/ui/store/index.ts';
import { createEditorSlice } from '../../../src/ui/features/environment/editor-slice.ts';
import { createEvaluationSlice } from '../../../src/ui/features/evaluation/evaluation-slice.ts';
import { createPolicySlice } from '../../../src/ui/features/policy/policy-slice.ts';
import { createTrainingSlice } from '../../../src/ui/features/training/training-slice.ts';
import { createTransferSlice } from '../../../src/ui/features/transfer/transfer-slice.ts';
import { createJudgeSlice } from '../../../src/ui/features/judge/judge-slice.ts';
import { createSimulatorSlice } from '../../../src/ui/features/judge/simulator-slice.ts';
import type { EngineGrpoOptions, GrpoStepReport } from '../../../src/workers/engine-bridge.ts';

const store = createStore<PlaygroundState>()(((...args: Parameters<typeof createPolicySlice>) => ({
  ...createEditorSlice(...args), ...createPolicySlice(...args), ...createEvaluationSlice(...args), ...createTrainingSlice(...args), ...createTransferSlice(...args), ...createJudgeSlice(...args), ...createSimulatorSlice(...args),
})) as never);

/** What the fakes saw: the code each sandbox loaded with its arguments, and each GRPO job's options. */
const sandboxes: { code: string; args: Record<string, unknown> }[] = [];
/** The tool simulator each sandbox was lent (its model and label; undefined: none). */
const lentSimulators: ({ model: string; label: string } | undefined)[] = [];
const grpoJobs: EngineGrpoOptions[] = [];
/** How many steps the next GRPO job reports before it returns (as if stopped there). */
let stepsToRun = 0;
/** When set, the next sandbox waits for Stop while "loading" and fails as the real bridge does. */
let hangWhileLoading = false;
/** When set, the next GRPO job fails with it (as the engine's job does when the trainer throws), after its steps. */
let grpoFailure: Error | null = null;

vi.mock('../../../src/ui/store/index.ts', () => ({ usePlayground: store }));
vi.mock('../../../src/ui/features/environment/monaco-setup.ts', () => ({ compileModel: async (model: { getValue(): string }) => ({ ok: true, code: `compiled:${model.getValue()}` }) }));
vi.mock('../../../src/ui/features/environment/editor-models.ts', () => ({ environmentModel: (_id: string, source: string) => ({ getValue: () => source }) }));
vi.mock('../../../src/ui/features/jobs/sandbox-frame.ts', () => ({ createIframeSandbox: async () => ({}) }));
vi.mock('../../../src/ui/features/models/model-actions.ts', () => ({ loadChosenModel: async () => false }));
vi.mock('../../../src/ui/features/training/run-storage.ts', () => ({
  listRuns: async () => [],
  putRun: async () => {},
  putCheckpoint: async () => {},
  getCheckpoint: async () => undefined,
  deleteRun: async () => {},
}));
vi.mock('../../../src/workers/sandbox-bridge.ts', () => {
  class SandboxStoppedError extends Error {
    constructor(readonly environmentName: string) {
      super('stopped while loading');
    }
  }
  return {
  SandboxStoppedError,
  openSandbox: async (request: { code: string; label: string; args: Record<string, unknown>; signal: AbortSignal; simulator?: { model: string; label: string } }) => {
    sandboxes.push({ code: request.code, args: request.args });
    lentSimulators.push(request.simulator && { model: request.simulator.model, label: request.simulator.label });
    if (hangWhileLoading) {
      await new Promise((resolve) => request.signal.addEventListener('abort', resolve, { once: true }));
      throw new SandboxStoppedError(request.label);
    }
    return { info: { name: 'reverse-text', numTasks: 50, rewardNames: ['exactReward', 'lengthMetric'], rewardWeights: [1, 0], metricKinds: { lengthMetric: 'info' } }, rollout: async () => ({}), stop: () => {}, dispose: () => {}, evaluate: async () => ({}) };
  },
  };
});
vi.mock('../../../src/workers/engine-bridge.ts', () => ({
  startEngine: async (seed: number) => ({ adapter: 'fake', model: 'tiny', parameters: 1, seed }),
  resetEngine: async (seed: number) => ({ adapter: 'fake', model: 'tiny', parameters: 1, seed }),
  onEngineError: () => () => {},
  pauseEngineJob: async () => {},
  createEngineChatClient: () => ({ chat: { completions: { create: async () => { throw new Error('not used'); } } } }),
  saveEngineCheckpoint: async () => new Map(),
  restoreEngineCheckpoint: async () => { throw new Error('not used'); },
  setEngineWeights: async () => {},
  trainSftInEngine: async () => [],
  trainGrpoInEngine: async (_source: unknown, options: EngineGrpoOptions, hooks: { onSteps: (reports: GrpoStepReport[]) => void }) => {
    grpoJobs.push(options);
    const from = options.startStep ?? 0;
    const reports = Array.from({ length: stepsToRun }, (_, i) => ({ metrics: { step: from + i }, rollouts: [] }) as unknown as GrpoStepReport);
    if (reports.length > 0) hooks.onSteps(reports);
    const failure = grpoFailure;
    grpoFailure = null;
    if (failure) throw failure;
    return reports.map((report) => report.metrics);
  },
}));

const actions = await import('../../../src/ui/features/training/training-actions.ts');
const { resetActionState } = await import('../../../src/ui/store/action-state.ts');
const questions: string[] = [];
let answer = false;

beforeAll(() => {
  actions.setAskPerson((question) => {
    questions.push(question);
    return answer;
  });
  store.getState().setEnvironments([
    { id: 'a', name: 'reverse-text', source: 'SOURCE-A', builtin: 'reverse-text', updatedAt: 0 },
    { id: 'b', name: 'my copy', source: 'SOURCE-B', builtin: 'reverse-text', updatedAt: 0 },
  ]);
  store.getState().setCurrentId('a');
  store.getState().setSettings({ argsJson: '{"numTasks":50}' });
  store.getState().setTrainingSettings({ grpoSteps: 5, checkpointEvery: 0 });
});

describe('training actions: a run is bound to its environment', () => {
  test('Continue after switching files runs the run\'s own code, arguments and settings, and says so', async () => {
    stepsToRun = 2;
    await actions.startTraining();
    expect(store.getState().job).toMatchObject({ status: 'done', failure: null });
    expect(sandboxes.at(-1)).toEqual({ code: 'compiled:SOURCE-A', args: { numTasks: 50 } });
    expect(store.getState().trainingRun?.lastJob).toMatchObject({ phase: 'grpo', nextStep: 2, environment: { label: 'reverse-text', source: 'SOURCE-A' } });

    // Another file with other code and other panel settings is open now.
    store.getState().setCurrentId('b');
    store.getState().setSettings({ argsJson: '{"numTasks":9}' });
    store.getState().setTrainingSettings({ grpoSteps: 99 });
    stepsToRun = 3;
    await actions.startTraining();
    expect(questions).toEqual([]);
    expect(sandboxes.at(-1)).toEqual({ code: 'compiled:SOURCE-A', args: { numTasks: 50 } });
    expect(grpoJobs.at(-1)).toMatchObject({ steps: 5, startStep: 2 });
    expect(store.getState().job.note).toMatch(/Continuing the run with its own code \(from the file “reverse-text”\), arguments and settings; the open file “my copy” differs and is not used\./);
    expect(store.getState().trainingRun?.grpo.map((metrics) => metrics.step)).toEqual([0, 1, 2, 3, 4]);
  });

  test('a new job on the run with changed code asks first; declining starts nothing, accepting trains the new code', async () => {
    const jobsBefore = grpoJobs.length;
    answer = false;
    await actions.startTraining();
    expect(questions).toHaveLength(1);
    expect(questions[0]).toMatch(/The open run on reverse-text \(0 SFT \+ 5 GRPO steps\) was trained with other code \(from the file “reverse-text”\) than the open file “my copy” has now\. Train this run further with the changed code\?/);
    expect(grpoJobs).toHaveLength(jobsBefore);
    expect(store.getState().job.status).toBe('idle');

    answer = true;
    stepsToRun = 1;
    await actions.startTraining();
    expect(questions).toHaveLength(2);
    expect(sandboxes.at(-1)).toEqual({ code: 'compiled:SOURCE-B', args: { numTasks: 9 } });
    expect(grpoJobs.at(-1)).toMatchObject({ steps: 99, startStep: 0 });
    expect(store.getState().trainingRun?.lastJob?.environment?.label).toBe('my copy');
  });
});

describe('training actions: the job runner\'s endings', () => {
  test('Stop while the environment loads ends the GRPO job at once, saying nothing ran; no engine job starts', async () => {
    resetActionState();
    store.getState().setTrainingRun(null);
    const jobsBefore = grpoJobs.length;
    hangWhileLoading = true;
    const running = actions.startTraining();
    await vi.waitFor(() => expect(store.getState().job.phase).toBe('starting the engine'));
    await vi.waitFor(() => expect(sandboxes.length).toBeGreaterThan(0));
    actions.stopTraining();
    expect(store.getState().job.status).toBe('stopping');
    await running;
    hangWhileLoading = false;
    expect(store.getState().job).toMatchObject({ status: 'done', phase: 'stopped', note: 'The environment "my copy" was still loading: the sandbox was shut down and nothing ran.' });
    expect(grpoJobs).toHaveLength(jobsBefore);
  });

  test('Stop before the job began (while compiling) changes nothing', async () => {
    resetActionState();
    const runBefore = store.getState().trainingRun;
    const sandboxesBefore = sandboxes.length;
    const running = actions.startTraining();
    actions.stopTraining();
    await running;
    expect(store.getState().job).toMatchObject({ status: 'done', phase: 'stopped', note: 'Stopped before the job began; nothing ran and nothing changed.' });
    expect(sandboxes).toHaveLength(sandboxesBefore);
    expect(store.getState().trainingRun).toBe(runBefore);
  });
});

describe('training actions: rewards that measure nothing', () => {
  test("the GRPO job gets the rubric's weights, and the engine's failure on rewards that measure nothing fails the Train job with its message", async () => {
    resetActionState();
    store.getState().setTrainingRun(null);
    stepsToRun = 0;
    const message = 'GRPO step 1: the reward function exactReward failed in every rollout, so the rewards are not measurements; the first error: exactReward threw: bug; scored 0; the run stops rather than train on rewards that measure nothing. Fix the reward function and train again';
    // The engine's error crosses comlink as a plain Error with the message.
    grpoFailure = new Error(message);
    await actions.startTraining();
    expect(grpoJobs.at(-1)?.rewardWeights).toEqual({ exactReward: 1, lengthMetric: 0 });
    expect(store.getState().job).toMatchObject({ status: 'failed', failure: message });
    expect(store.getState().trainingRun?.grpo ?? []).toEqual([]);
    // The failed job trained nothing, so it is not left as the run's unfinished job.
    expect(store.getState().trainingRun?.lastJob).toBeUndefined();

    // With the reward fixed in the open file, Train runs the fixed code: a new job, no question, not the failed job's code.
    const open = store.getState().currentId;
    store.getState().setEnvironments(store.getState().environments.map((environment) => (environment.id === open ? { ...environment, source: 'FIXED' } : environment)));
    const asked = questions.length;
    stepsToRun = 1;
    await actions.startTraining();
    expect(sandboxes.at(-1)?.code).toBe('compiled:FIXED');
    expect(questions).toHaveLength(asked);
    expect(store.getState().job).toMatchObject({ status: 'done', failure: null });
    expect(store.getState().job.note ?? '').not.toMatch(/Continuing/);
    expect(store.getState().trainingRun?.lastJob).toMatchObject({ phase: 'grpo', nextStep: 1, environment: { source: 'FIXED' } });
  });
});

describe('training actions: the tool simulator travels with the job', () => {
  test("a GRPO job lends its environment the simulator chosen in the tab, says so in its note and records it in the run's job; with the heuristic none is lent or recorded", async () => {
    resetActionState();
    store.getState().setTrainingRun(null);
    stepsToRun = 1;
    store.getState().setSimulatorKind('endpoint');
    store.getState().setSimulatorEndpoint({ baseURL: 'http://sim.test/v1', model: 'sim-m' });
    await actions.startTraining();
    expect(lentSimulators.at(-1)).toEqual({ model: 'sim-m', label: 'endpoint sim-m at http://sim.test/v1' });
    expect(store.getState().job).toMatchObject({ status: 'done', failure: null });
    expect(store.getState().job.note).toContain('The tools are simulated by endpoint sim-m at http://sim.test/v1 (lent as args.simulatorClient).');
    expect(store.getState().trainingRun?.lastJob).toMatchObject({ phase: 'grpo', simulator: 'endpoint sim-m at http://sim.test/v1' });

    // Back to the offline heuristic: the next job lends nothing, and its record names no simulator.
    store.getState().setSimulatorKind('heuristic');
    await actions.startTraining();
    expect(lentSimulators.at(-1)).toBeUndefined();
    expect(store.getState().job.note ?? '').not.toContain('simulated by');
    expect(store.getState().trainingRun?.lastJob?.simulator).toBeUndefined();
  });
});
