/**
 * `npm run bench:learn`: the default lesson (src/rl/lesson.ts) headless — reward before the
 * warm-up, after it and after GRPO, with steps/s and tokens/s per phase. WebGPU through Dawn by
 * default (the software adapter where there is no GPU; pass --quick there), or --backend cpu.
 * `--model nano` runs the same lesson on nano instead of tiny (is the pretrained model a better default?).
 * Prints a table and one JSON line.
 */
import { parseArgs } from 'node:util';
import { loadBuiltinEnvironment, loadBuiltinExpert } from '../src/envs/builtin/index.ts';
import { ScriptedClient } from '../src/envs/index.ts';
import { openModel, parseBackendName } from '../src/cli/open-model.ts';
import { DEFAULT_LESSON_ENVIRONMENT, DEFAULT_LESSON_OPTIONS } from '../src/rl/lesson.ts';
import { runTraining, type TrainingRunOptions } from '../src/rl/training-run.ts';

const { values } = parseArgs({
  options: {
    backend: { type: 'string' },
    quick: { type: 'boolean' },
    'sft-steps': { type: 'string' },
    steps: { type: 'string' },
    model: { type: 'string' },
  },
});
const backendName = parseBackendName(values.backend ?? 'webgpu');
const lesson = DEFAULT_LESSON_OPTIONS;
const sftSteps = Number(values['sft-steps'] ?? (values.quick ? 60 : lesson.warmup!.steps));
const grpoSteps = Number(values.steps ?? (values.quick ? 10 : lesson.grpo!.steps));
const options: TrainingRunOptions = {
  ...lesson,
  checkpointEvery: 0,
  warmup: { ...lesson.warmup!, steps: sftSteps },
  grpo: { ...lesson.grpo!, steps: grpoSteps },
};

const env = await loadBuiltinEnvironment(DEFAULT_LESSON_ENVIRONMENT.name, { ...DEFAULT_LESSON_ENVIRONMENT.args });
const expert = new ScriptedClient(await loadBuiltinExpert(DEFAULT_LESSON_ENVIRONMENT.name, env));
const modelName = values.model ?? 'tiny';
const model = await openModel(modelName, { backend: backendName, seed: options.seed });
console.error(`bench:learn ${modelName} on ${model.device}: ${sftSteps} SFT steps, ${grpoSteps} GRPO steps`);

const phaseTime = { sft: 0, grpo: 0 };
const phaseTokens = { sft: 0, grpo: 0 };
const report = await runTraining(env, model, expert, options, {
  onSftStep: (m) => {
    phaseTime.sft += m.stepMs;
    phaseTokens.sft += m.tokensTrained;
  },
  onGrpoStep: (m) => {
    phaseTime.grpo += m.timings.stepMs;
    phaseTokens.grpo += m.tokensSampled;
    console.error(`  grpo ${m.step + 1}/${grpoSteps} reward ${m.reward.mean.toFixed(3)}`);
  },
  onEvaluation: (e) => console.error(`  ${e.label}: reward ${e.summary.reward.mean.toFixed(3)}`),
});

const reward = Object.fromEntries(report.evaluations.map((e) => [e.label, e.summary.reward.mean]));
const passRate = Object.fromEntries(report.evaluations.map((e) => [e.label, e.summary.passRate]));
const rows = [
  ['before warm-up', reward.before, passRate.before, '', '', ''],
  ['after warm-up', reward['after warm-up'], passRate['after warm-up'], sftSteps, sftSteps / (phaseTime.sft / 1000), phaseTokens.sft / (phaseTime.sft / 1000)],
  ['after GRPO', reward['after GRPO'], passRate['after GRPO'], grpoSteps, grpoSteps / (phaseTime.grpo / 1000), phaseTokens.grpo / (phaseTime.grpo / 1000)],
] as const;
const fmt = (value: number | string | undefined, digits = 3) => (typeof value === 'number' ? value.toFixed(digits) : (value ?? ''));
console.log(`model: ${modelName} · adapter: ${model.device}\n`);
console.log('| phase | reward (greedy, 32 held-out tasks) | pass rate | steps | steps/s | tokens/s |');
console.log('|---|---|---|---|---|---|');
for (const [phase, r, p, steps, stepsPerSecond, tokensPerSecond] of rows) {
  console.log(`| ${phase} | ${fmt(r)} | ${fmt(p, 2)} | ${steps} | ${fmt(stepsPerSecond, 2)} | ${fmt(tokensPerSecond, 0)} |`);
}
console.log(JSON.stringify({ bench: 'learn', model: modelName, device: model.device, sftSteps, grpoSteps, reward, passRate, sft: { seconds: phaseTime.sft / 1000, tokensPerSecond: phaseTokens.sft / (phaseTime.sft / 1000) }, grpo: { seconds: phaseTime.grpo / 1000, sampledTokensPerSecond: phaseTokens.grpo / (phaseTime.grpo / 1000) } }));
model.backend.dispose();
