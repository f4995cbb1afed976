/**
 * Task synthesis during the tab's GRPO training, over faked bridges: the engine (a loop that draws
 * each step's tasks from the pool as it stands, rolls them out, reports the step and awaits the
 * refresh after the weight sync, as the engine worker does) and the sandbox (the environment run
 * in-process with a scripted policy that knows some years). The refresh adds only tasks in the band,
 * retires mastered ones within the pool's rules, lands in the run record, changes what later steps
 * roll out, and is kept when the job stops and Train continues it. A refresh that cannot work (no
 * documents, a dead generator, replies that are not tasks) leaves the pool as it was and says why.
 */
import { beforeEach, describe, expect, test, vi } from 'vitest';
import { createStore } from 'zustand/vanilla';
import { ChatClientError, completionText, Rubric, ScriptedClient, SingleTurnEnv, type RewardContext, type SamplingArgs, type Task } from '../../../src/envs/index.ts';
import { answersMatch, DEFAULT_POOL_RULES } from '../../../src/envs/studio/index.ts';
import type { PlaygroundState } from '../../../src/ui/store/index.ts';
import { createEditorSlice } from '../../../src/ui/features/environment/editor-slice.ts';
import { createEvaluationSlice } from '../../../src/ui/features/evaluation/evaluation-slice.ts';
import { createPolicySlice } from '../../../src/ui/features/policy/policy-slice.ts';
import { createTrainingSlice } from '../../../src/ui/features/training/training-slice.ts';
import { createTransferSlice } from '../../../src/ui/features/transfer/transfer-slice.ts';
import { createJudgeSlice } from '../../../src/ui/features/judge/judge-slice.ts';
import { createSimulatorSlice } from '../../../src/ui/features/judge/simulator-slice.ts';
import { createStudioSlice } from '../../../src/ui/features/studio/studio-slice.ts';
import type { AppRolloutSource, EngineGrpoOptions, GrpoStepReport } from '../../../src/workers/engine-bridge.ts';
import type { SandboxTrajectory } from '../../../src/workers/sandbox-bridge.ts';

const store = createStore<PlaygroundState>()(((...args: Parameters<typeof createPolicySlice>) => ({
  ...createEditorSlice(...args),
  ...createPolicySlice(...args),
  ...createEvaluationSlice(...args),
  ...createTrainingSlice(...args),
  ...createTransferSlice(...args),
  ...createJudgeSlice(...args),
  ...createSimulatorSlice(...args),
  ...createStudioSlice(...args),
})) as never);

// Each paragraph hides a year (the heuristic generator's cloze answer); the policy knows some years better than others.
const DOCUMENT = {
  name: 'station.md',
  text: 'The north hut was rebuilt in 1931 after the great storm.\n\nThe radio mast went up in 1948 on the eastern ridge.\n\nThe weather log has been kept daily since 1975 by the wardens.',
};
// Right answers out of 4 attempts: 1931 and 1066 always (mastered), 1948 and 1815 twice (learnable), 1975 never (too hard).
const KNOWN: Record<string, number> = { '1931': 4, '1948': 2, '1975': 0, '1066': 4, '1815': 2 };
const YEAR_OF: Record<string, string> = { 'rebuilt in': '1931', 'went up in': '1948', 'kept daily since': '1975', Hastings: '1066', Waterloo: '1815' };
const BATTLES: Task[] = [
  { question: 'In which year was the battle of Hastings?', answer: '1066' },
  { question: 'In which year was the battle of Waterloo?', answer: '1815' },
];

/** The scripted policy: attempt n (the sampling seed mod 4) at a question is right when n < KNOWN[year]. */
function knowsSomeYears(): ScriptedClient {
  return new ScriptedClient((messages, request) => {
    const question = messages.at(-1)!.content;
    const year = Object.entries(YEAR_OF).find(([cue]) => question.includes(cue))?.[1] ?? '0';
    const attempt = ((request?.seed ?? 0) % 4 + 4) % 4;
    return `Answer: ${attempt < (KNOWN[year] ?? 0) ? year : 'no idea'}`;
  });
}
const exactMatch = (ctx: RewardContext) => (answersMatch(completionText(ctx.completion), ctx.answer ?? '') ? 1 : 0);
/** The environment the fake sandbox runs: its training tasks are the two battles. */
const environment = new SingleTurnEnv({ name: 'years', dataset: BATTLES, rubric: new Rubric({ funcs: [exactMatch] }) });

/** What the fakes saw: the questions each step rolled out, and how often the sandbox was asked for its training tasks. */
const stepQuestions: string[][] = [];
let trainingTasksCalls = 0;
/** How many steps the next GRPO job runs before it returns (as if stopped there). */
let stepsToRun = 0;
/** Called by the fake engine before each refresh (after the step's report). */
let beforeRefresh: (step: number) => void = () => {};

vi.mock('../../../src/ui/store/index.ts', () => ({ usePlayground: store }));
vi.mock('../../../src/ui/features/environment/monaco-setup.ts', () => ({ compileModel: async (model: { getValue(): string }) => ({ ok: true, code: `compiled:${model.getValue()}` }) }));
vi.mock('../../../src/ui/features/environment/editor-models.ts', () => ({ environmentModel: (_id: string, source: string) => ({ getValue: () => source }) }));
vi.mock('../../../src/ui/features/jobs/sandbox-frame.ts', () => ({ createIframeSandbox: async () => ({}) }));
vi.mock('../../../src/ui/features/models/model-actions.ts', () => ({ loadChosenModel: async () => false }));
vi.mock('../../../src/ui/features/training/run-storage.ts', () => ({ listRuns: async () => [], putRun: async () => {}, putCheckpoint: async () => {}, getCheckpoint: async () => undefined, deleteRun: async () => {} }));
vi.mock('../../../src/workers/sandbox-bridge.ts', () => ({
  SandboxStoppedError: class extends Error {},
  openSandbox: async () => ({
    info: { name: 'years', numTasks: BATTLES.length, rewardNames: ['exactMatch'], rewardWeights: [1], metricKinds: {} },
    trainingTasks: async () => {
      trainingTasksCalls += 1;
      return structuredClone(BATTLES);
    },
    // The sandbox rolls out the task it is given (a pool task) with the policy; the real one relays the model calls to the engine.
    rollout: async (taskIndex: number, samplingArgs: SamplingArgs, _model: string, task?: Task): Promise<SandboxTrajectory> => {
      const trajectory = await environment.rollout(knowsSomeYears(), task ?? environment.dataset[taskIndex]!, samplingArgs, { taskIndex });
      return { ...trajectory, passed: environment.isPassed(trajectory) };
    },
    stop: () => {},
    dispose: () => {},
    evaluate: async () => ({}),
  }),
}));
vi.mock('../../../src/workers/engine-bridge.ts', () => ({
  startEngine: async (seed: number) => ({ adapter: 'fake', model: 'tiny', parameters: 1, seed }),
  resetEngine: async (seed: number) => ({ adapter: 'fake', model: 'tiny', parameters: 1, seed }),
  onEngineError: () => () => {},
  pauseEngineJob: async () => {},
  createEngineChatClient: () => knowsSomeYears(),
  saveEngineCheckpoint: async () => new Map(),
  restoreEngineCheckpoint: async () => {
    throw new Error('not used');
  },
  setEngineWeights: async () => {},
  trainSftInEngine: async () => [],
  // The engine's loop as it touches the app: each step draws tasks from the pool as it stands (with its version), rolls them out,
  // reports, then awaits the refresh after the weight sync; a new task count is a new pool version.
  trainGrpoInEngine: async (source: AppRolloutSource, options: EngineGrpoOptions, hooks: { onSteps: (reports: GrpoStepReport[]) => void }) => {
    let numTasks = source.numTasks;
    let version = 0;
    const from = options.startStep ?? 0;
    for (let step = from; step < from + stepsToRun; step++) {
      const rollouts = await Promise.all(Array.from({ length: numTasks }, (_, taskIndex) => source.rollout(taskIndex, { seed: step }, version)));
      stepQuestions[step] = rollouts.map((trajectory) => trajectory.prompt.at(-1)!.content);
      hooks.onSteps([{ metrics: { step }, rollouts: [] } as unknown as GrpoStepReport]);
      beforeRefresh(step);
      const size = await source.onPolicySynced?.(step, step + 1);
      if (size !== undefined) {
        numTasks = size;
        version += 1;
      }
    }
    return [];
  },
}));

const actions = await import('../../../src/ui/features/training/training-actions.ts');
const { refreshTabPool, DEFAULT_POOL_SYNTHESIS } = await import('../../../src/ui/features/training/pool-synthesis.ts');
const { sandboxMeasure } = await import('../../../src/ui/features/training/pool-synthesis-job.ts');
const { HeuristicStudioClient } = await import('../../../src/envs/studio/index.ts');

/** A sandbox measure over the in-process environment (the pool tasks are given, as the tab's sandbox gets them). */
const measure = sandboxMeasure(
  {
    rollout: async (taskIndex, samplingArgs, _model, task) => {
      const trajectory = await environment.rollout(knowsSomeYears(), task!, samplingArgs, { taskIndex });
      return { ...trajectory, passed: environment.isPassed(trajectory) };
    },
  },
  'policy',
  {},
  4,
  0,
);
const heuristic = {
  generator: { client: new HeuristicStudioClient('generator'), model: 'heuristic-generator', label: 'the offline heuristic generator' },
  verifier: { client: new HeuristicStudioClient('solver'), model: 'heuristic-solver' },
};
const settings = { ...DEFAULT_POOL_SYNTHESIS, every: 2, rules: { ...DEFAULT_POOL_RULES, minPool: 1 } };
const fresh = () => ({ tasks: structuredClone(BATTLES), retired: [], refreshes: 0 });

describe('refreshTabPool: one refresh of a job\'s pool', () => {
  test('in-band tasks join and mastered ones retire within the rules; the record has the counts and the histogram', async () => {
    const outcome = await refreshTabPool(fresh(), settings, { documents: [DOCUMENT], ...heuristic, policy: { client: knowsSomeYears(), model: 'policy' }, measure }, 1, 11, 2);
    if (!outcome.ok) throw new Error(outcome.error);
    expect(outcome.pool.tasks.map((task) => task.answer)).toEqual(['1815', '1948']);
    expect(outcome.pool.retired.map((task) => task.answer)).toEqual(['1066']);
    expect(outcome.pool.refreshes).toBe(1);
    // pool [Hastings 1, Waterloo 0.5], candidates 1931 (1), 1948 (0.5), 1975 (0): bins [0,.2) … [.8,1]
    expect(outcome.record).toMatchObject({ refresh: 0, step: 1, runStep: 11, poolBefore: 2, poolSize: 2, candidates: 3, added: 1, retired: 1, histogram: [1, 0, 2, 0, 2], policyVersion: 2 });

    // The default rules keep at least 4 tasks: nothing mastered retires from a pool of 2 that 1 joins.
    const kept = await refreshTabPool(fresh(), DEFAULT_POOL_SYNTHESIS, { documents: [DOCUMENT], ...heuristic, policy: { client: knowsSomeYears(), model: 'policy' }, measure }, 9, 9);
    expect(kept.ok && kept.record).toMatchObject({ added: 1, retired: 0, poolSize: 3 });
  });

  test('no documents, a dead generator, or replies that are not tasks: the pool stays as it was and the error says why', async () => {
    const pool = fresh();
    const parts = { ...heuristic, policy: { client: knowsSomeYears(), model: 'policy' }, measure };
    const none = await refreshTabPool(pool, settings, { ...parts, documents: [] }, 1, 1);
    expect(none).toMatchObject({ ok: false, pool: { tasks: BATTLES, refreshes: 0 } });
    expect(!none.ok && none.error).toMatch(/no documents: add some in the Studio tab/);

    const dead = new ScriptedClient(() => {
      throw new ChatClientError('could not reach http://127.0.0.1:9/v1 (connection refused)', 'network');
    });
    const deadOutcome = await refreshTabPool(pool, settings, { ...parts, documents: [DOCUMENT], generator: { client: dead, model: 'm', label: 'the Judge card (http://127.0.0.1:9/v1)' } }, 1, 1);
    expect(deadOutcome).toMatchObject({ ok: false, pool: { tasks: BATTLES, retired: [], refreshes: 0 } });
    expect(!deadOutcome.ok && deadOutcome.error).toMatch(/stopped: the generator failed: .*connection refused.*Check the generator \(the Judge card \(http:\/\/127\.0\.0\.1:9\/v1\)\).*pool as it was/);

    const garbage = new ScriptedClient(() => 'Sure! Here are some thoughts about huts and radio masts.');
    const garbageOutcome = await refreshTabPool(pool, settings, { ...parts, documents: [DOCUMENT], generator: { client: garbage, model: 'm', label: 'a chatty model' } }, 1, 1);
    expect(garbageOutcome).toMatchObject({ ok: false, pool: { tasks: BATTLES, refreshes: 0 } });
    expect(!garbageOutcome.ok && garbageOutcome.error).toMatch(/the generator wrote nothing that is a task \(question and answer; 1 malformed\); a chatty model may not follow the synthesis prompt\. Training went on with the pool as it was\./);
    // The job's pool object itself was never touched.
    expect(pool).toEqual(fresh());
  });
});

describe('synthesis in a GRPO job of the tab', () => {
  beforeEach(() => {
    stepQuestions.length = 0;
    trainingTasksCalls = 0;
  });

  test('refreshes after every N steps land in the run record, later steps roll out the refreshed pool, and Stop then Train keeps the pool', async () => {
    store.getState().setEnvironments([{ id: 'a', name: 'years', source: 'SOURCE', updatedAt: 0 }]);
    store.getState().setCurrentId('a');
    store.getState().setTrainingSettings({ grpoSteps: 6, checkpointEvery: 0 });
    store.getState().setStudio({ documents: [DOCUMENT] });
    store.getState().setPoolSynthesis(settings);

    stepsToRun = 3; // the job stops after step 3 of 6
    await actions.startTraining();
    expect(store.getState().job).toMatchObject({ status: 'done', failure: null });
    const run = store.getState().trainingRun!;
    expect(run.poolRefreshes).toHaveLength(1);
    expect(run.poolRefreshes![0]).toMatchObject({ runStep: 1, added: 1, retired: 1, poolSize: 2, histogram: [1, 0, 2, 0, 2], policyVersion: 2 });
    // Steps 0 and 1 rolled out the environment's tasks; step 2 the refreshed pool (Hastings retired, the radio mast joined).
    expect(stepQuestions[1]).toEqual(BATTLES.map((task) => task.question));
    expect(stepQuestions[2]![0]).toBe(BATTLES[1]!.question);
    expect(stepQuestions[2]![1]).toContain('went up in');
    expect(run.lastJob).toMatchObject({ phase: 'grpo', nextStep: 3, synthesis: { settings, pool: { refreshes: 1, retired: [BATTLES[0]] } } });
    expect(trainingTasksCalls).toBe(1);

    // Train continues the unfinished job with its own pool and settings (the panel's choice changed meanwhile), not the environment's tasks.
    store.getState().setPoolSynthesis({ ...settings, every: 1 });
    stepsToRun = 3;
    await actions.startTraining();
    expect(store.getState().job).toMatchObject({ status: 'done', failure: null });
    expect(trainingTasksCalls).toBe(1);
    expect(stepQuestions[3]![1]).toContain('went up in');
    const after = store.getState().trainingRun!;
    expect(after.poolRefreshes!.map((refresh) => refresh.runStep)).toEqual([1, 3, 5]);
    expect(after.poolRefreshes!.map((refresh) => refresh.refresh)).toEqual([0, 1, 2]);
    expect(after.lastJob).toMatchObject({ nextStep: 6, synthesis: { pool: { refreshes: 3 } } });
  });

  test('a refresh that fails mid-job leaves the pool, says why on the job, and training goes on; the next refresh that works clears it', async () => {
    store.getState().setTrainingRun(null);
    store.getState().setStudio({ documents: [DOCUMENT] });
    store.getState().setPoolSynthesis({ ...settings, every: 1 });
    store.getState().setTrainingSettings({ grpoSteps: 4 });
    // The documents are removed while the job runs, before its first refresh.
    beforeRefresh = (step) => {
      if (step === 0) store.getState().setStudio({ documents: [] });
    };
    stepsToRun = 2;
    await actions.startTraining();
    beforeRefresh = () => {};
    expect(store.getState().job).toMatchObject({ status: 'done', failure: null });
    const run = store.getState().trainingRun!;
    expect(run.grpo.map((metrics) => metrics.step)).toEqual([0, 1]);
    expect(run.poolRefreshes ?? []).toEqual([]);
    expect(run.lastJob).toMatchObject({ nextStep: 2, synthesis: { pool: { tasks: BATTLES, refreshes: 0, error: expect.stringMatching(/The pool refresh after step 1 had no documents: add some in the Studio tab/) } } });

    store.getState().setStudio({ documents: [DOCUMENT] });
    stepsToRun = 1;
    await actions.startTraining();
    const after = store.getState().trainingRun!;
    expect(after.poolRefreshes).toHaveLength(1);
    expect(after.lastJob?.phase === 'grpo' && after.lastJob.synthesis?.pool).toMatchObject({ refreshes: 1 });
    expect(after.lastJob?.phase === 'grpo' && after.lastJob.synthesis?.pool.error).toBeUndefined();
  });

  test('a job with synthesis and no documents, or with the Judge card as generator and no judge, fails before it trains, saying what to do', async () => {
    store.getState().setStudio({ documents: [] });
    store.getState().setPoolSynthesis(settings);
    store.getState().setTrainingSettings({ grpoSteps: 12 });
    stepsToRun = 1;
    const stepsBefore = store.getState().trainingRun?.grpo.length ?? 0;
    await actions.startTraining();
    expect(store.getState().job.status).toBe('failed');
    expect(store.getState().job.failure).toMatch(/Task synthesis during training needs documents: add some in the Studio tab/);
    expect(store.getState().trainingRun?.grpo.length ?? 0).toBe(stepsBefore);

    // A new run (no unfinished job to go on with its own settings) whose generator is the Judge card's model, with no judge set there
    // (the offline heuristic judge lends no model).
    store.getState().setTrainingRun(null);
    store.getState().setStudio({ documents: [DOCUMENT] });
    store.getState().setPoolSynthesis({ ...settings, generator: 'judge' });
    await actions.startTraining();
    expect(store.getState().job.status).toBe('failed');
    expect(store.getState().job.failure).toMatch(/The generator is the Judge card's model, and the Judge card has none: choose an endpoint, WebLLM or the in-tab model there, or pick the offline heuristic generator\./);
    expect(store.getState().trainingRun?.grpo).toEqual([]);
  });
});
