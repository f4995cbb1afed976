/**
 * `tabrl train <env> --model <tiny | model-dir>`: the training run of src/rl/training-run.ts in
 * Node — measure, SFT warm-up on the environment's expert demonstrations, measure, GRPO, measure —
 * printing one line (or, with --json, one JSON object) per step, and writing metrics.jsonl,
 * report.json and the trained model folder into --out.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { BUILTIN_ENVIRONMENTS, isBuiltinEnvironment, loadBuiltinExpert } from '../envs/builtin/index.ts';
import { ScriptedClient, type ChatClient, type EvaluationSummary } from '../envs/index.ts';
import type { ModelBackend } from '../gpu/model/backend.ts';
import { LORA_TARGET_MODULES, type LoraConfig } from '../gpu/model/layout.ts';
import { CHECKPOINT_FORMAT, parseCheckpoint, serializeCheckpoint } from '../rl/checkpoint.ts';
import { exportMergedModel, exportPeftAdapter } from '../rl/export.ts';
import { runTraining, type TrainingPosition, type TrainingRunOptions } from '../rl/training-run.ts';
import { CliError } from './cli-error.ts';
import { isEnvironmentPath, loadEnvironmentSpec } from './load-environment.ts';
import { openModel, parseBackendName } from './open-model.ts';

/** Usage text of `tabrl train`. */
export const TRAIN_USAGE = `Usage: tabrl train <env-name | path/to/env.ts> --model <tiny | model-dir> [options]

Measures the model on held-out tasks, warms it up with SFT on demonstrations made by the
environment's expert (built-in environments), measures again, trains with GRPO, and measures a last time.

Options:
  --model M              tiny (TabRL's from-scratch preset) or a Hugging Face-style folder (required)
  --backend B            cpu (default) or webgpu (Dawn; the software adapter where there is no GPU)
  --demonstrations N     expert rollouts for warm-up data (default 256)
  --sft-steps K          SFT warm-up steps (default 100; 0 skips the warm-up)
  --sft-batch N          sequences per SFT step (default 16)
  --sft-lr LR            SFT learning rate (default 3e-3)
  --steps N              GRPO steps (default 50; 0 skips GRPO)
  --tasks-per-step B     tasks per GRPO step (default 4)
  --group G              completions per task (default 8)
  --lr LR                GRPO learning rate (default 1e-3)
  --lora-rank R          LoRA adapters of rank R on every linear layer (default 16 for a model folder, 0 = train every
                         weight; tiny trains every weight unless given)
  --max-tokens N         max tokens per model turn (default 32)
  --max-async K          GRPO steps rollouts may run ahead of the weights (default 1; 0 = on-policy)
  --kl-beta B            KL penalty β to the reference policy (default 0): with LoRA the base model (adapters off,
                         no extra memory), with full fine-tuning a frozen copy of the weights GRPO starts from
  --eval-tasks N         held-out tasks measured before and after each phase (default 32; 0 = none)
  --env-args JSON        arguments for the environment's loadEnvironment(args)
  --seed S               seeds the model init, task order and sampling (default 0)
  --checkpoint-every N   save weights and optimizer state every N steps (default 10; also at phase ends and on Ctrl-C)
  --out DIR              output folder (default runs/train-<env>-<time>)
  --resume DIR           continue the run in DIR from its last checkpoint, with its settings
  --json                 print one JSON object per step instead of a progress line

Writes to DIR: metrics.jsonl (one line per step and measurement), report.json, checkpoint/ (weights,
optimizer state, position), model/ (the trained model as a Hugging Face folder; with LoRA the adapter
merged in) and, with --lora-rank, adapter/ (adapter_model.safetensors + adapter_config.json, PEFT).`;

/** Everything a run needs to start or resume, kept in its checkpoint. */
interface RunSettings {
  spec: string;
  envArgs: Record<string, unknown>;
  model: string;
  backend: string;
  lora: LoraConfig | null;
  sftSteps: number;
  grpoSteps: number;
  options: TrainingRunOptions;
}

/** Runs `tabrl train`; returns the exit code. */
export async function runTrain(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      model: { type: 'string' },
      backend: { type: 'string' },
      demonstrations: { type: 'string' },
      'sft-steps': { type: 'string' },
      'sft-batch': { type: 'string' },
      'sft-lr': { type: 'string' },
      steps: { type: 'string' },
      'tasks-per-step': { type: 'string' },
      group: { type: 'string' },
      lr: { type: 'string' },
      'lora-rank': { type: 'string' },
      'max-tokens': { type: 'string' },
      'max-async': { type: 'string' },
      'kl-beta': { type: 'string' },
      'eval-tasks': { type: 'string' },
      'env-args': { type: 'string' },
      seed: { type: 'string' },
      'checkpoint-every': { type: 'string' },
      out: { type: 'string' },
      resume: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(TRAIN_USAGE);
    return 0;
  }
  let settings: RunSettings;
  let resumeFrom: TrainingPosition | undefined;
  let outDir: string;
  if (values.resume !== undefined) {
    outDir = values.resume;
    const checkpointDir = join(outDir, 'checkpoint');
    if (!existsSync(join(checkpointDir, 'state.json'))) throw new CliError(`--resume ${outDir}: no checkpoint there (expected ${join(checkpointDir, 'state.json')})`, 2);
    const state = JSON.parse(readFileSync(join(checkpointDir, 'state.json'), 'utf8')) as { phase: TrainingPosition['phase']; nextStep: number; run: RunSettings };
    settings = state.run;
    resumeFrom = { phase: state.phase, nextStep: state.nextStep };
  } else {
    settings = settingsFromFlags(positionals, values);
    outDir = values.out ?? join('runs', `train-${settings.spec.replace(/[^\w.-]+/g, '_')}-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  }
  const { spec, envArgs, sftSteps, grpoSteps } = settings;
  const env = await loadEnvironmentSpec(spec, { args: envArgs });
  let expert: ChatClient | null = null;
  if (settings.options.warmup && resumeFrom?.phase !== 'grpo') {
    if (!isBuiltinEnvironment(spec)) throw new CliError(`an SFT warm-up needs demonstrations; only built-in environments (${Object.keys(BUILTIN_ENVIRONMENTS).join(', ')}) have an expert. Pass --sft-steps 0 to skip the warm-up.`, 2);
    expert = new ScriptedClient(await loadBuiltinExpert(spec, env));
  }
  const model = await openModel(settings.model, { backend: parseBackendName(settings.backend), seed: settings.options.seed, lora: settings.lora });
  if (resumeFrom) {
    const checkpointDir = join(outDir, 'checkpoint');
    try {
      const checkpoint = await parseCheckpoint(async (name) => new Uint8Array(await readFile(join(checkpointDir, name))), checkpointDir);
      await model.backend.setParameters(checkpoint.weights);
      await model.backend.setOptimizerState(checkpoint.optimizer);
      if (checkpoint.reference) await model.backend.setReference(checkpoint.reference);
      if (checkpoint.rolloutsAhead && resumeFrom.phase === 'grpo') resumeFrom = { ...resumeFrom, rolloutsAhead: checkpoint.rolloutsAhead };
    } catch (error) {
      throw new CliError(`--resume: ${(error as Error).message}`);
    }
  }
  const options: TrainingRunOptions = { ...settings.options, ...(resumeFrom ? { resumeFrom } : {}) };
  mkdirSync(outDir, { recursive: true });
  const metricsPath = join(outDir, 'metrics.jsonl');
  if (!resumeFrom) writeFileSync(metricsPath, '');
  const record = (line: Record<string, unknown>) => {
    appendFileSync(metricsPath, `${JSON.stringify(line)}\n`);
    if (values.json) console.log(JSON.stringify(line));
  };
  const say = (text: string) => {
    if (!values.json) console.error(text);
  };
  say(`${resumeFrom ? `resuming at ${resumeFrom.phase} step ${resumeFrom.nextStep}:` : 'training'} ${model.label} on ${env.name} · ${model.device}`);
  const saveCheckpoint = async ({ rolloutsAhead, ...position }: TrainingPosition) => {
    // Full fine-tuning with KL keeps its frozen reference; with LoRA the reference is the base.
    const reference = model.backend.lora === null ? await model.backend.getReference() : null;
    const files = serializeCheckpoint({
      state: { format: CHECKPOINT_FORMAT, ...position, run: settings as unknown as Record<string, unknown> },
      weights: await model.backend.getParameters(),
      optimizer: await model.backend.getOptimizerState(),
      ...(rolloutsAhead ? { rolloutsAhead } : {}),
      ...(reference ? { reference } : {}),
    });
    writeFolderAtomically(join(outDir, 'checkpoint'), files);
  };

  const interrupt = new AbortController();
  const onSigint = () => interrupt.abort();
  process.once('SIGINT', onSigint);
  let report;
  try {
    report = await runTraining(env, model, expert, options, {
      signal: interrupt.signal,
      onPhase: (phase, detail) => say(`== ${phase}: ${detail}`),
      onCheckpoint: saveCheckpoint,
      onEvaluation: ({ label, summary }) => {
        record({ phase: 'evaluate', label, reward: summary.reward.mean, passRate: summary.passRate, scores: summary.scores });
        say(`   ${label}: ${describeSummary(summary)}`);
      },
      onSftStep: (m) => {
        record({ phase: 'sft', ...m });
        say(`   sft ${m.step + 1}/${sftSteps}  loss ${m.loss.toFixed(4)}  grad ${m.gradNorm.toFixed(3)}  ${m.stepMs.toFixed(0)} ms${m.skipped ? `  skipped: ${m.skipped}` : ''}`);
      },
      onGrpoStep: (m) => {
        record({ phase: 'grpo', ...m });
        say(`   grpo ${m.step + 1}/${grpoSteps}  reward ${m.reward.mean.toFixed(3)} ± ${m.reward.std.toFixed(3)}  pass ${m.passRate.toFixed(2)}  loss ${m.loss.toFixed(4)}  ${m.tokensPerSecond.toFixed(0)} tok/s  ${(m.timings.stepMs / 1000).toFixed(1)} s${m.skipped ? `  (${m.skipped})` : ''}`);
      },
    });
  } catch (error) {
    throw new CliError(`training stopped: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    process.removeListener('SIGINT', onSigint);
  }

  await writeExports(outDir, model.backend, settings);
  writeFileSync(join(outDir, 'report.json'), `${JSON.stringify({ environment: spec, env_args: envArgs, model: settings.model, device: model.device, options, ...report, interrupted: interrupt.signal.aborted }, null, 2)}\n`);
  say(`wrote ${metricsPath}, ${join(outDir, 'report.json')}, the checkpoint and the model to ${outDir}`);
  if (interrupt.signal.aborted) say(`interrupted: continue with tabrl train --resume ${outDir}`);
  model.backend.dispose();
  return interrupt.signal.aborted ? 130 : 0;
}

/** Writes model/ (merged when LoRA) and, with LoRA, adapter/ in the PEFT format. */
async function writeExports(outDir: string, backend: ModelBackend, settings: RunSettings): Promise<void> {
  const parameters = await backend.getParameters();
  writeFolderAtomically(join(outDir, 'model'), exportMergedModel(parameters, backend.config, settings.lora));
  if (settings.lora) writeFolderAtomically(join(outDir, 'adapter'), exportPeftAdapter(parameters, backend.config, settings.lora, settings.model));
}

/** Writes the files into a temporary folder, then swaps it in, so a crash never leaves half a checkpoint. */
function writeFolderAtomically(dir: string, files: Map<string, Uint8Array>): void {
  const temporary = `${dir}.tmp`;
  rmSync(temporary, { recursive: true, force: true });
  mkdirSync(temporary, { recursive: true });
  for (const [name, bytes] of files) writeFileSync(join(temporary, name), bytes);
  rmSync(dir, { recursive: true, force: true });
  renameSync(temporary, dir);
}

/** The run's settings from the command-line flags of a new run. */
function settingsFromFlags(positionals: string[], values: Record<string, string | boolean | undefined>): RunSettings {
  const given = positionals[0];
  if (!given || positionals.length > 1) throw new CliError(`give exactly one environment\n\n${TRAIN_USAGE}`, 2);
  if (typeof values.model !== 'string') throw new CliError(`--model is required (tiny, or a model folder)\n\n${TRAIN_USAGE}`, 2);
  const integer = (flag: string, fallback: number, min = 0): number => {
    const text = values[flag];
    if (text === undefined) return fallback;
    const value = Number(text);
    if (!Number.isInteger(value) || value < min) throw new CliError(`--${flag} must be an integer ≥ ${min}, got "${String(text)}"`, 2);
    return value;
  };
  const positive = (flag: string, fallback: number): number => {
    const text = values[flag];
    if (text === undefined) return fallback;
    const value = Number(text);
    if (!(value > 0)) throw new CliError(`--${flag} must be a positive number, got "${String(text)}"`, 2);
    return value;
  };
  const nonNegative = (flag: string, fallback: number): number => {
    const text = values[flag];
    if (text === undefined) return fallback;
    const value = Number(text);
    if (!(value >= 0) || !Number.isFinite(value)) throw new CliError(`--${flag} must be a number ≥ 0, got "${String(text)}"`, 2);
    return value;
  };
  const sftSteps = integer('sft-steps', 100);
  const grpoSteps = integer('steps', 50);
  const model = values.model === 'tiny' ? 'tiny' : resolve(values.model);
  // Real checkpoints train LoRA adapters by default; the tiny model is small enough to train whole.
  const loraRank = integer('lora-rank', model === 'tiny' ? 0 : 16);
  return {
    // A file path is kept absolute, so that --resume works from any folder.
    spec: isEnvironmentPath(given) ? resolve(given) : given,
    envArgs: parseEnvArgs(values['env-args'] as string | undefined),
    model,
    backend: parseBackendName(values.backend as string | undefined),
    lora: loraRank > 0 ? { rank: loraRank, alpha: 2 * loraRank, targetModules: [...LORA_TARGET_MODULES] } : null,
    sftSteps,
    grpoSteps,
    options: {
      seed: integer('seed', 0),
      maxTokens: integer('max-tokens', 32, 1),
      evalTasks: integer('eval-tasks', 32),
      checkpointEvery: integer('checkpoint-every', 10),
      warmup: sftSteps > 0 ? { demonstrations: integer('demonstrations', 256, 1), steps: sftSteps, batchSize: integer('sft-batch', 16, 1), lr: positive('sft-lr', 3e-3) } : null,
      grpo: grpoSteps > 0
        ? { steps: grpoSteps, tasksPerStep: integer('tasks-per-step', 4, 1), groupSize: integer('group', 8, 2), schedule: { lr: positive('lr', 1e-3) }, maxAsync: integer('max-async', 1), klBeta: nonNegative('kl-beta', 0) }
        : null,
    },
  };
}

function describeSummary(summary: EvaluationSummary): string {
  return `reward ${summary.reward.mean.toFixed(3)} ± ${summary.reward.std.toFixed(3)}, pass rate ${summary.passRate.toFixed(2)}`;
}

function parseEnvArgs(text: string | undefined): Record<string, unknown> {
  if (text === undefined) return {};
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new CliError(`--env-args must be a JSON object, e.g. '{"compact": true}', got ${text}`, 2);
}
