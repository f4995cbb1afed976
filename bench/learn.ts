/**
 * `npm run bench:learn`: the default lesson (src/rl/lesson.ts) headless — reward before the
 * warm-up, after it and after GRPO, with steps/s and tokens/s per phase. WebGPU through Dawn by
 * default (the software adapter where there is no GPU; pass --quick there), or --backend cpu.
 * Prints a table and one JSON line.
 *
 * `--compare`: warms up once, then runs the lesson's GRPO phase from those same weights (and
 * optimizer state) with the defaults and with each GRPO option changed in turn, and says whether
 * any changes the result: a variant counts as a change when its reward after GRPO differs from the
 * default's by more than the default's own seed-to-seed difference (the default run again with
 * another GRPO seed), the noise floor of a single run.
 */
import { parseArgs } from 'node:util';
import { loadBuiltinEnvironment, loadBuiltinExpert } from '../src/envs/builtin/index.ts';
import { ScriptedClient } from '../src/envs/index.ts';
import { openModel, parseBackendName } from '../src/cli/open-model.ts';
import { DEFAULT_LESSON_ENVIRONMENT, DEFAULT_LESSON_MODEL, DEFAULT_LESSON_OPTIONS } from '../src/rl/lesson.ts';
import type { GrpoOptions } from '../src/rl/grpo-trainer.ts';
import { runTraining, type TrainingRunOptions } from '../src/rl/training-run.ts';

const { values } = parseArgs({
  options: {
    backend: { type: 'string' },
    quick: { type: 'boolean' },
    'sft-steps': { type: 'string' },
    steps: { type: 'string' },
    compare: { type: 'boolean' },
    model: { type: 'string' },
    only: { type: 'string' },
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
// The lesson's own model (nano) unless --model says otherwise (--model tiny: the from-scratch one).
const modelName = values.model ?? DEFAULT_LESSON_MODEL;
const model = await openModel(modelName, { backend: backendName, seed: options.seed });
const fmt = (value: number | string | undefined, digits = 3) => (typeof value === 'number' ? value.toFixed(digits) : (value ?? ''));

if (values.compare) await compare();
else await lessonOnce();
model.backend.dispose();

/** The lesson once: the table of phases. */
async function lessonOnce(): Promise<void> {
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
  console.log(`adapter: ${model.device}\n`);
  console.log('| phase | reward (greedy, 32 held-out tasks) | pass rate | steps | steps/s | tokens/s |');
  console.log('|---|---|---|---|---|---|');
  for (const [phase, r, p, steps, stepsPerSecond, tokensPerSecond] of rows) {
    console.log(`| ${phase} | ${fmt(r)} | ${fmt(p, 2)} | ${steps} | ${fmt(stepsPerSecond, 2)} | ${fmt(tokensPerSecond, 0)} |`);
  }
  console.log(JSON.stringify({ bench: 'learn', device: model.device, sftSteps, grpoSteps, reward, passRate, sft: { seconds: phaseTime.sft / 1000, tokensPerSecond: phaseTokens.sft / (phaseTime.sft / 1000) }, grpo: { seconds: phaseTime.grpo / 1000, sampledTokensPerSecond: phaseTokens.grpo / (phaseTime.grpo / 1000) } }));
}

/** Each GRPO option changed in turn, from the same warmed-up weights. */
async function compare(): Promise<void> {
  const variants: Array<{ name: string; change: Partial<GrpoOptions>; seed?: number }> = [
    { name: 'default', change: {} },
    { name: 'default, GRPO seed + 1 (noise)', change: {}, seed: options.seed + 1 },
    { name: 'lossType grpo', change: { lossType: 'grpo' } },
    { name: 'lossType bnpo (micro-batch 8)', change: { lossType: 'bnpo' } },
    { name: 'lossType dr_grpo', change: { lossType: 'dr_grpo' } },
    { name: 'scaleRewards group', change: { scaleRewards: 'group' } },
    { name: 'scaleRewards batch', change: { scaleRewards: 'batch' } },
    { name: 'importanceSampling sequence (GSPO)', change: { importanceSampling: 'sequence' } },
    { name: 'maskTruncated', change: { maskTruncated: true } },
    { name: 'dynamicSampling', change: { dynamicSampling: true } },
    { name: 'entropyTopQ 0.2', change: { entropyTopQ: 0.2 } },
    { name: 'maxAsync 2, maxStaleness 1 (resample)', change: { maxAsync: 2, maxStaleness: 1 } },
    { name: 'echoWeight 0.1', change: { echoWeight: 0.1 } },
  ];
  const only = values.only?.split(',');
  console.error(`bench:learn --compare on ${model.device}: ${sftSteps} SFT steps once, then ${grpoSteps} GRPO steps per variant`);
  const warm = await runTraining(env, model, expert, { ...options, grpo: null }, { onEvaluation: (e) => console.error(`  ${e.label}: reward ${e.summary.reward.mean.toFixed(3)}`) });
  const warmReward = warm.evaluations.find((e) => e.label === 'after warm-up')!.summary;
  const parameters = await model.backend.getParameters();
  const optimizer = await model.backend.getOptimizerState();
  const results: Array<{ name: string; reward: number; passRate: number; seconds: number; zeroStd: number; truncated: number }> = [];
  for (const variant of variants) {
    if (only && !only.some((word) => variant.name.includes(word)) && variant.name !== 'default') continue;
    await model.backend.setParameters(parameters);
    await model.backend.setOptimizerState(optimizer);
    let seconds = 0;
    let zeroStd = 0;
    let truncated = 0;
    const report = await runTraining(env, model, expert, { ...options, seed: variant.seed ?? options.seed, warmup: null, grpo: { ...options.grpo!, ...variant.change }, resumeFrom: { phase: 'grpo', nextStep: 0 } }, {
      onGrpoStep: (m) => {
        seconds += m.timings.stepMs / 1000;
        zeroStd += m.zeroStdFraction / grpoSteps;
        truncated += m.truncatedFraction / grpoSteps;
      },
    });
    const after = report.evaluations.find((e) => e.label === 'after GRPO')!.summary;
    results.push({ name: variant.name, reward: after.reward.mean, passRate: after.passRate, seconds, zeroStd, truncated });
    console.error(`  ${variant.name}: reward ${after.reward.mean.toFixed(3)}, pass rate ${after.passRate.toFixed(2)}, ${seconds.toFixed(0)} s`);
  }
  const base = results[0]!;
  const noise = results.find((r) => r.name.includes('noise'));
  const floor = noise ? Math.abs(noise.reward - base.reward) : 0;
  console.log(`adapter: ${model.device}; ${sftSteps} SFT steps once (reward after warm-up ${warmReward.reward.mean.toFixed(3)}, pass rate ${warmReward.passRate.toFixed(2)}), then ${grpoSteps} GRPO steps per variant; rewards greedy on 32 held-out tasks\n`);
  console.log('| variant | reward after GRPO | Δ reward | pass rate | zero-std groups | truncated | GRPO s | changes the result? |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const r of results) {
    const delta = r.reward - base.reward;
    const verdict = r === base || r === noise ? '—' : Math.abs(delta) > floor ? (delta > 0 ? 'yes, better' : 'yes, worse') : 'no (within seed noise)';
    console.log(`| ${r.name} | ${fmt(r.reward)} | ${r === base ? '' : `${delta >= 0 ? '+' : ''}${delta.toFixed(3)}`} | ${fmt(r.passRate, 2)} | ${fmt(r.zeroStd, 2)} | ${fmt(r.truncated, 2)} | ${fmt(r.seconds, 0)} | ${verdict} |`);
  }
  console.log(JSON.stringify({ bench: 'learn-compare', device: model.device, sftSteps, grpoSteps, afterWarmup: { reward: warmReward.reward.mean, passRate: warmReward.passRate }, noiseFloor: floor, variants: results }));
}
