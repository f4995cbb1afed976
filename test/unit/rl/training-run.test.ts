// runTraining's checkpoints around the measurement after the warm-up: a stop during it must not leave
// a checkpoint that says GRPO step 0 (the measurement would be lost for good on resume); the warm-up's
// demonstrations rendered with the environment's tools wherever the environment runs.
import { expect, test } from 'vitest';
import { loadBuiltinEnvironment, loadBuiltinExpert } from '../../../src/envs/builtin/index.ts';
import { Rubric, ScriptedClient, SingleTurnEnv, ToolEnv, type State, type ToolSchema, type ToolState } from '../../../src/envs/index.ts';
import { runTraining, type TrainingPosition, type TrainingRunOptions } from '../../../src/rl/training-run.ts';
import { openModel } from '../../../src/cli/open-model.ts';
import { createCpuDecoder } from '../../../src/gpu/inference/cpu-decoder.ts';
import type { ModelBackend } from '../../../src/gpu/model/backend.ts';

const TOOLS: ToolSchema[] = [{ type: 'function', function: { name: 'track_parcel', description: 'Where a parcel is.', parameters: { type: 'object', properties: { tracking_id: { type: 'string' } }, required: ['tracking_id'] } } }];

const OPTIONS: TrainingRunOptions = {
  seed: 3,
  maxTokens: 4,
  evalTasks: 2,
  warmup: { demonstrations: 8, steps: 2, batchSize: 2, lr: 3e-3 },
  grpo: null,
};

test('a stop during the measurement after warm-up leaves the checkpoint before it, and a resume takes the measurement', { timeout: 120_000 }, async () => {
  const env = await loadBuiltinEnvironment('reverse-text', { compact: true, minLength: 4, maxLength: 5, numTasks: 20 });
  const expert = new ScriptedClient(await loadBuiltinExpert('reverse-text', env));
  const model = await openModel('tiny', { backend: 'cpu', seed: 3 });
  const stop = new AbortController();
  const saved: TrainingPosition[] = [];
  const first = await runTraining(env, model, expert, OPTIONS, {
    signal: stop.signal,
    onPhase: (phase, detail) => {
      if (phase === 'evaluate' && detail === 'after warm-up') stop.abort();
    },
    onCheckpoint: (position) => { saved.push(position); },
  });
  expect(first.evaluations.map((evaluation) => evaluation.label)).toEqual(['before']);
  expect(saved.at(-1)).toEqual({ phase: 'sft', nextStep: 2 });
  expect(saved.some((position) => position.phase === 'grpo')).toBe(false);

  const resumedSaves: TrainingPosition[] = [];
  const resumed = await runTraining(env, model, expert, { ...OPTIONS, resumeFrom: { phase: 'sft', nextStep: 2 } }, { onCheckpoint: (position) => { resumedSaves.push(position); } });
  expect(resumed.sft).toEqual([]);
  expect(resumed.evaluations.map((evaluation) => evaluation.label)).toEqual(['after warm-up']);
  expect(resumedSaves).toEqual([{ phase: 'sft', nextStep: 2 }, { phase: 'grpo', nextStep: 0 }]);
  model.backend.dispose();
});

test("a model's createDecoder is what the run's measurements and GRPO games sample with", { timeout: 120_000 }, async () => {
  const env = await loadBuiltinEnvironment('reverse-text', { compact: true, minLength: 4, maxLength: 5, numTasks: 20 });
  const model = await openModel('tiny', { backend: 'cpu', seed: 3 });
  let built = 0;
  const createDecoder = async (backend: ModelBackend) => {
    built += 1;
    return createCpuDecoder(backend);
  };
  const report = await runTraining(env, { ...model, createDecoder }, null, { ...OPTIONS, warmup: null, grpo: { steps: 1, tasksPerStep: 1, groupSize: 2, schedule: { lr: 1e-3 }, maxAsync: 0 } });
  expect(report.evaluations.map((evaluation) => evaluation.label)).toEqual(['before', 'after GRPO']);
  expect(built).toBeGreaterThan(0); // the run sampled with it, not with a CPU decoder of its own
  model.backend.dispose();
});

test("the warm-up renders its demonstrations with the environment's tools, also for an environment file run in its own process (info.tools), as sampling does", { timeout: 120_000 }, async () => {
  const tools = TOOLS;
  const rubric = <S extends State>() => new Rubric<S>({ funcs: [function answeredReward() { return 1; }] });
  const inProcess = new ToolEnv({ name: 'parcels', dataset: [{ question: 'Where is PX-1?' }, { question: 'Where is PX-2?' }], rubric: rubric<ToolState>(), tools: [{ name: 'track_parcel', description: 'Where a parcel is.', parameters: tools[0]!.function.parameters!, run: async () => '{"location":"Turin hub"}' }] });
  // An environment as tabrl's isolated process shows it: a plain Environment with the child's description.
  const isolated = Object.assign(new SingleTurnEnv({ name: 'parcels', dataset: inProcess.dataset, rubric: rubric() }), { info: { tools } });
  const expert = new ScriptedClient((messages) => (messages.some((message) => message.role === 'tool') ? 'Turin hub' : { tool_calls: [{ id: 'a', type: 'function', function: { name: 'track_parcel', arguments: '{"tracking_id":"PX-1"}' } }] }));
  for (const env of [inProcess, isolated]) {
    const model = await openModel('tiny', { backend: 'cpu', seed: 3 });
    const rendered: Array<{ tools?: unknown }> = [];
    const renderChat = model.tokenizer.renderChat.bind(model.tokenizer);
    model.tokenizer.renderChat = (messages, options) => (rendered.push(options ?? {}), renderChat(messages, options));
    await runTraining(env, model, expert, { ...OPTIONS, evalTasks: 0, warmup: { demonstrations: 2, steps: 1, batchSize: 2, lr: 1e-3 } });
    expect(rendered.length).toBeGreaterThan(0);
    for (const options of rendered) expect(options.tools).toEqual(tools);
    model.backend.dispose();
  }
});
