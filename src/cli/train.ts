/**
 * `tabrl train <env> --model <tiny | model-dir>`: the training run of src/rl/training-run.ts in
 * Node — measure, SFT warm-up on the environment's expert demonstrations, measure, GRPO, measure —
 * printing one line (or, with --json, one JSON object) per step, and writing metrics.jsonl,
 * report.json and the trained model folder into --out.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { fsyncSync, openSync, closeSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { BUILTIN_ENVIRONMENTS, isBuiltinEnvironment, loadBuiltinExpert } from '../envs/builtin/index.ts';
import { ScriptedClient, type ChatClient, type EvaluationSummary } from '../envs/index.ts';
import type { ModelBackend } from '../gpu/model/backend.ts';
import { LORA_TARGET_MODULES, type LoraConfig } from '../gpu/model/layout.ts';
import { CHECKPOINT_FORMAT, parseCheckpoint, serializeCheckpoint } from '../rl/checkpoint.ts';
import { exportMergedModel, exportPeftAdapter } from '../rl/export.ts';
import type { SftStepMetrics } from '../rl/sft-trainer.ts';
import { BrokenRewardsError, LOSS_TYPES, type GrpoOptions, type GrpoStepMetrics } from '../rl/grpo-trainer.ts';
import { TURN_CREDITS } from '../rl/advantages.ts';
import { lessonPreset } from '../rl/lesson.ts';
import { runTraining, type TrainingEvaluation, type TrainingPosition, type TrainingRunOptions } from '../rl/training-run.ts';
import { CliError } from './cli-error.ts';
import { parseFlags } from './flags.ts';
import { DEFAULT_TIME_LIMIT_MS } from './isolated-environment.ts';
import { closeEnvironment, isEnvironmentPath, loadEnvironmentSpec } from './load-environment.ts';
import { checkFinite, modelFolderOf, openModel, parseBackendName, type OpenedModel } from './open-model.ts';
import { byteTokenizerFiles } from '../gpu/io/byte-model-folder.ts';
import { prepareOutputFolder } from './results-writer.ts';
import { onStopSignal } from './stop-signals.ts';
import { letEventsRun } from './let-events-run.ts';
import { createJudgeClient, judgeUsage, judgeSettingsFromFlags, type JudgeSettings } from './judge.ts';
import { checkJudgePanel, createJudgePanelClient, readJudgePanelFile, writeTrainingPanelReport, type JudgePanelSettings } from './judge-panel-file.ts';
import { checkSavedPool, createPoolRefresher, POOL_REFRESH_OPTIONS, POOL_REFRESH_USAGE, poolRefreshFromFlags, type PoolRefreshSettings, type SavedTaskPool } from './train-pool-refresh.ts';
import { errorMessage } from '../common/error-message.ts';
import { capText } from './child-message-check.ts';
import { OutputWriteError, recordRunStatus, writingFile } from './run-status.ts';
import { tabrlVersion } from './version.ts';

/** Usage text of `tabrl train`. */
const TRAIN_USAGE = `Usage: tabrl train <env-name | path/to/env.ts> --model <tiny | nano | model-dir> [options]
       tabrl train <wordle | reverse-text> --lesson | --quick [options]

Measures the model on held-out tasks, warms it up with SFT on demonstrations made by the
environment's expert (built-in environments), measures again, trains with GRPO, and measures a last time.

Options:
  --model M              tiny (TabRL's from-scratch preset), nano (TabRL's small pretrained byte-level model,
                         shipped in public/models/nano) or a Hugging Face-style folder (required without --lesson)
  --lesson               the lesson's preset for the environment (wordle: lesson 6, nano on the compact Wordle;
                         reverse-text: the default lesson, nano): its model, --env-args and settings, which
                         other flags override
  --quick                the lesson's preset cut to a few minutes on a software adapter or the CPU (implies --lesson)
  --backend B            cpu (default: the fast WASM backend on every core), cpu-reference (the plain-TypeScript oracle)
                         or webgpu (Dawn; the software adapter where there is no GPU)
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

GRPO knobs (docs/training.md says when to use each):
  --loss-type T          how token losses are averaged: dapo (default; over the step's tokens), bnpo (per
                         micro-batch), grpo (per sequence, then over sequences), dr_grpo (a constant: no length bias)
  --scale-rewards S      divide centred rewards by the group's std (group), the step's (batch) or not (none, default)
  --turn-credit C        with turn rewards (rubric.addTurnReward): credit a turn with its own and later turns'
                         normalised rewards (return-to-go, default) or its own only (turn)
  --importance-sampling L  PPO ratios per token (token, default) or one per sequence (sequence: GSPO)
  --clip-low E           lower PPO clip ε (default 0.2)
  --clip-high E          upper PPO clip ε (default 0.28, DAPO's clip-higher)
  --temperature T        sampling temperature of GRPO rollouts (default 1)
  --mask-truncated       leave rollouts cut by --max-tokens out of the loss (default: trained on)
  --keep-equal-groups    train on groups whose rewards are all equal (default: dropped; they carry no signal)
  --dynamic-sampling     draw more tasks while groups come back with equal rewards (DAPO; default off)
  --max-tasks-per-step N   the most tasks a step may draw with --dynamic-sampling (default 3 × --tasks-per-step)
  --entropy-top-q Q      train only on this top share of tokens by sampling entropy, e.g. 0.2 (default 1 = all)
  --max-staleness K      the most weight versions old rollouts may be (default: no bound; matters with --max-async ≥ 2)
  --stale-rollouts A     rollouts past --max-staleness: resample (default) or downweight (×0.5 per version past K)
  --echo-weight L        λ of an SFT loss on the environment's reply tokens in multi-turn rollouts (ECHO; default 0)
  --micro-batch N        sequences per backward pass (the step's gradient accumulates over them; default 8 on the cpu
                         backends; on webgpu the largest whose step fits --memory-budget and the GPU's limits, chosen
                         from each step's longest sequence; given, it is forced there and checked)
  --memory-budget MiB    webgpu: the GPU memory a training step may use, weights and optimizer state included (default:
                         4 × the GPU's maxBufferSize, within 1024-4096; 1024 under WebGPU's default limits)
  --activation-checkpointing M   webgpu: on (keep each layer's output only, recompute the rest in backward), off, or
                         auto (default: on for a micro-batch whose activations would pass 256 MiB or the GPU's limits)
  --max-grad-norm N      clip the global gradient norm to this (default 1; 0 disables)
  --weight-decay W       AdamW weight decay (default 0)
  --lr-warmup N          steps of linear learning-rate warm-up (default 0)
  --lr-schedule K        constant (default) or cosine (decays to 0.1 × --lr by the last step)

${POOL_REFRESH_USAGE}

Other options:
  --eval-tasks N         held-out tasks measured before and after each phase (default 32; 0 = none)
  --env-args JSON        arguments for the environment's loadEnvironment(args)
  --seed S               seeds the model init, task order and sampling (default 0)
  --checkpoint-every N   save weights and optimizer state every N steps (default 10; also at phase ends and on Ctrl-C)
  --out DIR              output folder (default runs/train-<env>-<time>); one that holds a run is refused
  --overwrite            replace the run in --out
  --resume DIR           continue the run in DIR from its last checkpoint, with its settings
  --time-limit SECONDS   an environment file's code may run this long without returning, per stretch (default 5)
${judgeUsage(25)}
  --judges FILE          a panel of judges lent as the reward's one judge, as in tabrl eval --judges: JSON
                         {"aggregation": "mean|majority|unanimous", "judges": [{"name", "baseUrl", "model", "apiKeyEnv"?}, …]};
                         its agreement over the run goes to DIR/judge-panel.json
  --json                 print one JSON object per step instead of a progress line

Writes to DIR: metrics.jsonl (one line per step and measurement), report.json, checkpoint/ (weights,
optimizer state, position), model/ (the trained model as a Hugging Face folder; with LoRA the adapter
merged in), with --lora-rank adapter/ (adapter_model.safetensors + adapter_config.json, PEFT), and
status.json ("running" while it runs, then "completed", "interrupted" or "failed" with the reason).`;

/** Everything a run needs to start or resume, kept in its checkpoint. */
interface RunSettings {
  spec: string;
  envArgs: Record<string, unknown>;
  model: string;
  backend: string;
  /** --activation-checkpointing (webgpu only); absent in runs saved before it existed, which means 'auto'. */
  activationCheckpointing?: 'auto' | 'on' | 'off';
  /** --memory-budget in MiB (webgpu only); absent: the backend's default budget. */
  memoryBudgetMiB?: number;
  lora: LoraConfig | null;
  sftSteps: number;
  grpoSteps: number;
  options: TrainingRunOptions;
  /** A judge endpoint lent to the environment (its key is read from apiKeyEnv at each start). */
  judge?: JudgeSettings;
  /** A panel of judges lent as one (--judges FILE; keys read from each judge's apiKeyEnv at each start). */
  judgePanel?: JudgePanelSettings;
  /** Task synthesis during training (--synth-docs). */
  poolRefresh?: PoolRefreshSettings;
}

/** What a run did up to a checkpoint, kept in it so a resumed run reports the whole run and rewinds metrics.jsonl. */
interface RunHistory {
  evaluations: TrainingEvaluation[];
  sft: SftStepMetrics[];
  grpo: GrpoStepMetrics[];
  /** Lines of metrics.jsonl written when the checkpoint was taken. */
  metricsLines: number;
}

/** The record `tabrl train` keeps in a checkpoint's state.json as `run` (format 2 kept the settings alone). */
interface SavedRun {
  settings: RunSettings;
  history: RunHistory;
  /** With --synth-docs: the task pool as it stood, and how many refreshes made it (a resumed run goes on from there). */
  pool?: SavedTaskPool;
}

const CHECKPOINT_COMPLETE = 'COMPLETE';

/** Runs `tabrl train`; returns the exit code. */
export async function runTrain(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags({
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
      'loss-type': { type: 'string' },
      'scale-rewards': { type: 'string' },
      'turn-credit': { type: 'string' },
      'importance-sampling': { type: 'string' },
      'clip-low': { type: 'string' },
      'clip-high': { type: 'string' },
      temperature: { type: 'string' },
      'mask-truncated': { type: 'boolean' },
      'keep-equal-groups': { type: 'boolean' },
      'dynamic-sampling': { type: 'boolean' },
      'max-tasks-per-step': { type: 'string' },
      'entropy-top-q': { type: 'string' },
      'max-staleness': { type: 'string' },
      'stale-rollouts': { type: 'string' },
      'echo-weight': { type: 'string' },
      'micro-batch': { type: 'string' },
      'memory-budget': { type: 'string' },
      'activation-checkpointing': { type: 'string' },
      'max-grad-norm': { type: 'string' },
      'weight-decay': { type: 'string' },
      'lr-warmup': { type: 'string' },
      'lr-schedule': { type: 'string' },
      'eval-tasks': { type: 'string' },
      'env-args': { type: 'string' },
      seed: { type: 'string' },
      'checkpoint-every': { type: 'string' },
      out: { type: 'string' },
      overwrite: { type: 'boolean' },
      resume: { type: 'string' },
      'time-limit': { type: 'string' },
      'judge-base-url': { type: 'string' },
      'judge-model': { type: 'string' },
      'judge-api-key-env': { type: 'string' },
      judges: { type: 'string' },
      ...POOL_REFRESH_OPTIONS,
      json: { type: 'boolean' },
      lesson: { type: 'boolean' },
      quick: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(TRAIN_USAGE);
    return 0;
  }
  const timeLimitText = values['time-limit'];
  const timeLimitMs = timeLimitText === undefined ? DEFAULT_TIME_LIMIT_MS : Number(timeLimitText) * 1000;
  if (!(timeLimitMs >= 100 && timeLimitMs <= 3_600_000)) throw new CliError(`--time-limit must be a number of seconds from 0.1 to 3600, got "${timeLimitText}"`, 2);
  let settings: RunSettings;
  let resumeFrom: TrainingPosition | undefined;
  let resumedPool: SavedTaskPool | undefined;
  let outDir: string;
  let checkpointDir: string | undefined;
  let history: RunHistory = { evaluations: [], sft: [], grpo: [], metricsLines: 0 };
  if (values.resume !== undefined) {
    const given = Object.keys(values).filter((flag) => !['resume', 'json', 'time-limit'].includes(flag) && values[flag as keyof typeof values] !== undefined);
    if (positionals.length > 0 || given.length > 0) throw new CliError(`--resume continues a run with the settings in its checkpoint; leave out ${[...positionals, ...given.map((flag) => `--${flag}`)].join(', ')}`, 2);
    outDir = values.resume;
    checkpointDir = findCheckpoint(outDir);
    const state = readCheckpointState(join(checkpointDir, 'state.json'));
    if (finishedRun(outDir)) {
      // Resuming used to run the last measurement again and rewrite the same files.
      console.error(
        `${outDir} holds a finished run (report.json); there is nothing to resume. To train its model further, start a new run from it: ` +
          `tabrl train ${state.run.settings.spec} --model ${join(outDir, 'model')} --out NEW_DIR`,
      );
      return 0;
    }
    settings = state.run.settings;
    if (settings.poolRefresh) resumedPool = checkSavedPool(state.run.pool, `--resume ${outDir}`);
    history = state.run.history;
    resumeFrom = { phase: state.phase, nextStep: state.nextStep };
  } else {
    settings = settingsFromFlags(positionals, values);
    outDir = values.out ?? join('runs', `train-${settings.spec.replace(/[^\w.-]+/g, '_')}-${new Date().toISOString().replace(/[:.]/g, '-')}`);
    prepareOutputFolder(outDir, { overwrite: values.overwrite === true, what: 'a training run', resumeHint: `tabrl train --resume ${outDir}` });
  }
  const panel = settings.judgePanel ? createJudgePanelClient(settings.judgePanel, 120_000) : undefined;
  const judge = panel ? { client: panel, model: 'judge-panel' } : settings.judge ? { client: createJudgeClient(settings.judge, 120_000), model: settings.judge.model } : undefined;
  // status.json says where the run stands: "running" until it ends, then how it ended, whatever stopped it.
  const status = { path: join(outDir, 'status.json'), fields: { command: 'train', environment: settings.spec, started_at: new Date().toISOString() } };
  recordRunStatus(status.path, 'running', status.fields);
  const ended = (how: 'completed' | 'interrupted' | 'failed', more: Record<string, unknown> = {}) => recordRunStatus(status.path, how, { ...status.fields, ...more, finished_at: new Date().toISOString() });
  let env: Awaited<ReturnType<typeof loadEnvironmentSpec>> | undefined;
  try {
    env = await loadEnvironmentSpec(settings.spec, { args: settings.envArgs, isolation: { timeLimitMs }, ...(judge ? { judge } : {}) });
    if (resumedPool) env.dataset.splice(0, env.dataset.length, ...resumedPool.tasks);
    const code = await train(env, settings, { outDir, checkpointDir, resumeFrom, history, ...(resumedPool ? { poolRefreshes: resumedPool.refreshes } : {}), json: values.json === true, onForcedExit: () => ended('interrupted') });
    if (panel && settings.judgePanel) writeTrainingPanelReport(outDir, settings.judgePanel, panel);
    ended(code === 0 ? 'completed' : 'interrupted');
    return code;
  } catch (error) {
    ended('failed', { stopped_early: capText(errorMessage(error), 2000) });
    if (error instanceof OutputWriteError) throw new CliError(`${error.message}; make room (or fix the folder), then ${continueAdvice(outDir)}`);
    throw error;
  } finally {
    if (env) closeEnvironment(env);
  }
}

/** How to go on with the run in `outDir` after it stopped: from its checkpoint when it has one, else from the start. */
function continueAdvice(outDir: string): string {
  return existsSync(join(outDir, 'checkpoint', 'state.json')) ? `continue with tabrl train --resume ${outDir}` : `start the run again with --out ${outDir} --overwrite`;
}

/** Reads --activation-checkpointing: auto, on or off, and only with --backend webgpu (the CPU backend keeps every activation). */
function activationCheckpointingFromFlags(text: string | undefined, backend: string): { activationCheckpointing?: 'auto' | 'on' | 'off' } {
  if (text === undefined) return {};
  if (text !== 'auto' && text !== 'on' && text !== 'off') throw new CliError(`--activation-checkpointing takes auto, on or off, got "${text}"`, 2);
  if (backend !== 'webgpu') throw new CliError('--activation-checkpointing is a setting of --backend webgpu; the cpu backend keeps every activation', 2);
  return { activationCheckpointing: text };
}

/** Reads --memory-budget: a whole number of MiB, and only with --backend webgpu (the CPU backends' memory is not chosen from). */
function memoryBudgetFromFlags(text: string | undefined, backend: string): { memoryBudgetMiB?: number } {
  if (text === undefined) return {};
  const value = Number(text);
  if (!(Number.isInteger(value) && value > 0)) throw new CliError(`--memory-budget takes a whole number of MiB, e.g. 2048, got "${text}"`, 2);
  if (backend !== 'webgpu') throw new CliError('--memory-budget is a setting of --backend webgpu, whose micro-batch it chooses; the cpu backends use --micro-batch', 2);
  return { memoryBudgetMiB: value };
}

/**
 * Returns the GRPO trainer's micro-batch chooser on WebGPU: per step length T, the largest micro-batch
 * that fits the budget (or --micro-batch, forced and checked), said on stderr whenever it changes.
 */
function microBatchChooser(memory: NonNullable<OpenedModel['memory']>, settings: RunSettings, say: (text: string) => void): (T: number) => number {
  const grpo = settings.options.grpo!;
  const budgetBytes = settings.memoryBudgetMiB === undefined ? memory.defaultBudgetBytes : settings.memoryBudgetMiB * 2 ** 20;
  const forced = (grpo as Partial<GrpoOptions>).microBatchSize;
  // a step trains at most its tasks × group sequences (the flags always set both; 4 and 8 are the trainer's defaults)
  const maxMicroBatch = (grpo.maxTasksPerStep ?? grpo.tasksPerStep ?? 4) * (grpo.groupSize ?? 8);
  const MiB = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
  const byLength = new Map<number, number>();
  let said = 0; // the micro-batch last said
  return (T) => {
    const known = byLength.get(T);
    if (known !== undefined) return known;
    const choice = memory.chooseMicroBatch(T, { budgetBytes, maxMicroBatch, ...(forced === undefined ? {} : { forced }) });
    byLength.set(T, choice.B);
    const accounted = `model state ${MiB(choice.stateBytes)} + batch ${MiB(choice.plan.bytes)} (activations ${choice.plan.checkpointing ? 'checkpointed' : 'kept'}) = ${MiB(choice.stepBytes)} of the ${MiB(budgetBytes)} budget (--memory-budget)`;
    // e.g. "the largest that fits: model state 588 MiB + batch 418 MiB (…) = 1006 MiB of the 1024 MiB budget; at 14: the step needs 1026 MiB …"
    const why = forced === undefined ? `the largest that fits: ${accounted}; ${choice.reason}` : `${choice.reason}: ${accounted}`;
    if (choice.B !== said) say(`   micro-batch ${choice.B} at T ${T}: ${why}`);
    said = choice.B;
    return choice.B;
  };
}

/** Whether `outDir`'s report.json says its run ended on its own (a run stopped by Ctrl-C says interrupted; one that failed wrote none). */
function finishedRun(outDir: string): boolean {
  try {
    const report: unknown = JSON.parse(readFileSync(join(outDir, 'report.json'), 'utf8'));
    return typeof report === 'object' && report !== null && (report as { interrupted?: unknown }).interrupted === false;
  } catch {
    return false;
  }
}

/** The training run itself, once the environment is loaded. */
async function train(
  env: Awaited<ReturnType<typeof loadEnvironmentSpec>>,
  settings: RunSettings,
  run: { outDir: string; checkpointDir: string | undefined; resumeFrom: TrainingPosition | undefined; history: RunHistory; json: boolean; onForcedExit: () => void; poolRefreshes?: number },
): Promise<number> {
  const { spec, envArgs, sftSteps, grpoSteps } = settings;
  const { outDir, history } = run;
  let resumeFrom = run.resumeFrom;
  const values = { json: run.json };
  if (env.evaluationTasks.length === 0 && settings.options.evalTasks > 0) throw new CliError(`${env.name} has no evaluation tasks; check --env-args, or pass --eval-tasks 0`, 2);
  if (env.dataset.length === 0 && settings.grpoSteps > 0) throw new CliError(`${env.name} has no training tasks; check --env-args, or pass --steps 0`, 2);
  let expert: ChatClient | null = null;
  if (settings.options.warmup && resumeFrom?.phase !== 'grpo') {
    if (!isBuiltinEnvironment(spec)) throw new CliError(`an SFT warm-up needs demonstrations; only built-in environments (${Object.keys(BUILTIN_ENVIRONMENTS).join(', ')}) have an expert. Pass --sft-steps 0 to skip the warm-up.`, 2);
    expert = new ScriptedClient(await loadBuiltinExpert(spec, env));
  }
  const checkpointing = settings.activationCheckpointing ?? 'auto';
  const model = await openModel(settings.model, {
    backend: parseBackendName(settings.backend),
    seed: settings.options.seed,
    lora: settings.lora,
    activationCheckpointing: checkpointing === 'auto' ? 'auto' : checkpointing === 'on',
  });
  if (resumeFrom) {
    const checkpointDir = run.checkpointDir!;
    try {
      const checkpoint = await parseCheckpoint(async (name) => new Uint8Array(await readFile(join(checkpointDir, name))), checkpointDir);
      checkFinite(checkpoint.weights, `${checkpointDir}/weights.safetensors`);
      await model.backend.setParameters(checkpoint.weights);
      await model.backend.setOptimizerState(checkpoint.optimizer);
      if (checkpoint.reference) await model.backend.setReference(checkpoint.reference);
      if (checkpoint.rolloutsAhead && resumeFrom.phase === 'grpo') resumeFrom = { ...resumeFrom, rolloutsAhead: checkpoint.rolloutsAhead };
    } catch (error) {
      throw new CliError(`--resume: ${errorMessage(error)}`);
    }
  }
  const options: TrainingRunOptions = { ...settings.options, ...(resumeFrom ? { resumeFrom } : {}) };
  mkdirSync(outDir, { recursive: true });
  const metricsPath = join(outDir, 'metrics.jsonl');
  // A resumed run rewinds metrics.jsonl to its checkpoint: the steps after it run again.
  const kept = resumeFrom && existsSync(metricsPath) ? readFileSync(metricsPath, 'utf8').split('\n').filter((line) => line !== '').slice(0, history.metricsLines) : [];
  writingFile(metricsPath, () => writeFileSync(metricsPath, kept.map((line) => `${line}\n`).join('')));
  let metricsLines = kept.length;
  const record = (line: Record<string, unknown>) => {
    writingFile(metricsPath, () => appendFileSync(metricsPath, `${JSON.stringify(line)}\n`));
    metricsLines += 1;
    if (values.json) console.log(JSON.stringify(line));
  };
  const say = (text: string) => {
    if (!values.json) console.error(text);
  };
  // On WebGPU the micro-batch comes from the memory budget (chosen again on resume; the settings keep only the budget and a forced --micro-batch).
  const microBatchFor = model.memory && options.grpo ? microBatchChooser(model.memory, settings, say) : undefined;
  if (microBatchFor && options.grpo) options.grpo = { ...options.grpo, microBatchFor };
  say(`${resumeFrom ? `resuming at ${resumeFrom.phase} step ${resumeFrom.nextStep}:` : 'training'} ${model.label} on ${env.name} · ${model.device} · sampling on ${model.createDecoder ? 'the GPU (WebGPU decoder)' : 'the CPU decoder'}`);
  const saveCheckpoint = async ({ rolloutsAhead, ...position }: TrainingPosition) => {
    // Full fine-tuning with KL keeps its frozen reference; with LoRA the reference is the base.
    const reference = model.backend.lora === null ? await model.backend.getReference() : null;
    const files = serializeCheckpoint({
      state: { format: CHECKPOINT_FORMAT, ...position, run: { settings, history: { ...history, metricsLines }, ...(refreshPool ? { pool: { tasks: [...env.dataset], refreshes: refreshPool.refreshes() } } : {}) } satisfies SavedRun as unknown as Record<string, unknown> },
      weights: await model.backend.getParameters(),
      optimizer: await model.backend.getOptimizerState(),
      ...(rolloutsAhead ? { rolloutsAhead } : {}),
      ...(reference ? { reference } : {}),
    });
    writingFile(join(outDir, 'checkpoint'), () => writeFolderAtomically(join(outDir, 'checkpoint'), files, { markComplete: true }));
  };

  const refreshPool = settings.poolRefresh ? await createPoolRefresher(env, settings.poolRefresh, { record, say }, run.poolRefreshes ?? 0) : undefined;
  const interrupt = onStopSignal({ beforeForcedExit: run.onForcedExit });
  let report;
  try {
    report = await runTraining(env, model, expert, options, {
      signal: interrupt.signal,
      onPhase: (phase, detail) => say(`== ${phase}: ${detail}`),
      onCheckpoint: saveCheckpoint,
      onEvaluation: ({ label, summary }) => {
        history.evaluations.push({ label, summary });
        record({ phase: 'evaluate', label, reward: summary.reward.mean, passRate: summary.passRate, scores: summary.scores });
        say(`   ${label}: ${describeSummary(summary)}`);
      },
      onSftStep: async (m) => {
        history.sft.push(m);
        record({ phase: 'sft', ...m });
        say(`   sft ${m.step + 1}/${sftSteps}  loss ${m.loss.toFixed(4)}  grad ${m.gradNorm.toFixed(3)}  ${m.stepMs.toFixed(0)} ms${m.skipped ? `  skipped: ${m.skipped}` : ''}`);
        await letEventsRun();
      },
      onGrpoStep: async (m, policy) => {
        history.grpo.push(m);
        record({ phase: 'grpo', ...m });
        say(`   grpo ${m.step + 1}/${grpoSteps}  ${describeGrpoStep(m)}`);
        await refreshPool?.afterStep(m.step, policy);
        // No yield here (unlike SFT): GRPO's rollouts already give Ctrl-C its turn, and a stop let in
        // between a step and its checkpoint would abort the rollouts sampled ahead that it saves.
      },
    });
  } catch (error) {
    if (error instanceof OutputWriteError) throw error;
    if (error instanceof BrokenRewardsError) throw new CliError(`training stopped: ${error.message}. ${brokenRewardsAdvice(spec, outDir)}`);
    throw new CliError(`training stopped: ${errorMessage(error)}`);
  } finally {
    interrupt.dispose();
  }

  await writeExports(outDir, model.backend, settings);
  // The whole run, resumed parts included: what the checkpoint had, and what ran since.
  const whole = { ...report, evaluations: history.evaluations, sft: history.sft, grpo: history.grpo };
  writingFile(join(outDir, 'report.json'), () => writeFileSync(join(outDir, 'report.json'), `${JSON.stringify({ environment: spec, env_args: envArgs, model: settings.model, device: model.device, ...tabrlVersion(), options, ...whole, interrupted: interrupt.signal.aborted }, null, 2)}\n`));
  // A run stopped before its first checkpoint (during the first measurement) has nothing to resume from.
  const resumable = existsSync(join(outDir, 'checkpoint', 'state.json'));
  say(`wrote ${metricsPath}, ${join(outDir, 'report.json')}, ${resumable ? 'the checkpoint ' : ''}and the model to ${outDir}`);
  if (interrupt.signal.aborted) {
    say(
      resumable
        ? `interrupted: continue with tabrl train --resume ${outDir}`
        : `interrupted before the first checkpoint (nothing was trained yet): start it again with --out ${outDir} --overwrite`,
    );
  }
  model.backend.dispose();
  return interrupt.signal.aborted ? interrupt.exitCode : 0;
}

/** What to do after a run stopped on rewards that measure nothing: find the failure, fix it, start again (no model or report.json was written). */
function brokenRewardsAdvice(spec: string, outDir: string): string {
  const resumable = existsSync(join(outDir, 'checkpoint', 'state.json'));
  return (
    `No model or report.json was written. \`tabrl eval ${spec} --model local:tiny -n 2\` shows each rollout's errors; once the reward works, ` +
    (resumable ? `continue with tabrl train --resume ${outDir}, or ` : '') +
    `start the run again with --out ${outDir} --overwrite`
  );
}

/**
 * The newest complete checkpoint of a run: checkpoint.tmp when its writing finished (the swap was
 * cut short), else checkpoint, else checkpoint.old (the swap was cut short between its renames). A
 * folder counts only with its COMPLETE marker, written last: without it, its files may be half there.
 */
function findCheckpoint(outDir: string): string {
  const candidates = [`${join(outDir, 'checkpoint')}.tmp`, join(outDir, 'checkpoint'), `${join(outDir, 'checkpoint')}.old`];
  const complete = candidates.find((dir) => existsSync(join(dir, 'state.json')) && existsSync(join(dir, CHECKPOINT_COMPLETE)));
  const unmarked = candidates.find((dir) => existsSync(join(dir, 'state.json')));
  if (!complete && unmarked) {
    throw new CliError(`--resume ${outDir}: ${unmarked} has no ${CHECKPOINT_COMPLETE} marker, so its writing may not have finished and it is not used; start the run again with --out ${outDir} --overwrite`, 2);
  }
  if (!complete) {
    // A run interrupted before its first checkpoint leaves a report but no checkpoint: --out alone would refuse the folder.
    const again = existsSync(join(outDir, 'report.json')) ? `start the run again with --out ${outDir} --overwrite` : 'start a new run with --out';
    throw new CliError(`--resume ${outDir}: no checkpoint there (expected ${join(outDir, 'checkpoint', 'state.json')}); ${again}`, 2);
  }
  return complete;
}

/** Reads and checks a checkpoint's state.json; every problem is one line naming the field. */
function readCheckpointState(path: string): { phase: TrainingPosition['phase']; nextStep: number; run: SavedRun } {
  const broken = (what: string) => new CliError(`--resume: ${path} ${what}; the checkpoint cannot be used (start a new run with --out)`, 2);
  let state: Record<string, unknown>;
  try {
    state = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  } catch (error) {
    throw broken(`is not valid JSON (${errorMessage(error)})`);
  }
  if (typeof state !== 'object' || state === null) throw broken('is not a JSON object');
  if (state.phase !== 'sft' && state.phase !== 'grpo') throw broken(`has phase ${JSON.stringify(state.phase)}, expected "sft" or "grpo"`);
  if (!Number.isInteger(state.nextStep) || (state.nextStep as number) < 0) throw broken(`has nextStep ${JSON.stringify(state.nextStep)}, expected a step number`);
  const run = state.run as Record<string, unknown> | undefined;
  if (typeof run !== 'object' || run === null) throw broken('has no "run" record of the settings');
  // Format 2 of the CLI kept the settings alone as the run record.
  const saved: SavedRun = 'settings' in run ? (run as unknown as SavedRun) : { settings: run as unknown as RunSettings, history: { evaluations: [], sft: [], grpo: [], metricsLines: Number.MAX_SAFE_INTEGER } };
  const problem = checkRunSettings(saved.settings);
  if (problem) throw broken(`has ${problem}`);
  const h = saved.history as Partial<RunHistory> | undefined;
  if (!h || !Array.isArray(h.evaluations) || !Array.isArray(h.sft) || !Array.isArray(h.grpo) || !Number.isInteger(h.metricsLines)) throw broken('has a broken "run.history"');
  const steps = state.phase === 'sft' ? saved.settings.sftSteps : saved.settings.grpoSteps;
  if ((state.nextStep as number) > steps) throw broken(`is at ${state.phase} step ${state.nextStep as number}, past the run's ${steps} steps`);
  return { phase: state.phase, nextStep: state.nextStep as number, run: saved };
}

/** What is wrong with saved settings (a sentence), or undefined when they are usable. */
function checkRunSettings(settings: unknown): string | undefined {
  const s = settings as Partial<RunSettings> | null;
  if (typeof s !== 'object' || s === null) return 'no settings';
  const count = (value: unknown) => Number.isInteger(value) && (value as number) >= 0;
  if (typeof s.spec !== 'string' || s.spec === '') return 'no environment ("spec")';
  if (typeof s.envArgs !== 'object' || s.envArgs === null || Array.isArray(s.envArgs)) return '"envArgs" that is not an object';
  if (typeof s.model !== 'string' || s.model === '') return 'no model';
  if (s.backend !== 'cpu' && s.backend !== 'cpu-reference' && s.backend !== 'webgpu') return `backend ${JSON.stringify(s.backend)}, expected "cpu", "cpu-reference" or "webgpu"`;
  if (s.lora !== null && (typeof s.lora !== 'object' || !count(s.lora?.rank) || s.lora.rank < 1)) return '"lora" that is neither null nor { rank, alpha, targetModules }';
  if (s.memoryBudgetMiB !== undefined && !(Number.isInteger(s.memoryBudgetMiB) && s.memoryBudgetMiB > 0)) return `"memoryBudgetMiB" ${JSON.stringify(s.memoryBudgetMiB)}, expected a whole number of MiB`;
  const j = s.judge as Partial<JudgeSettings> | undefined;
  if (j !== undefined && (typeof j !== 'object' || j === null || typeof j.baseUrl !== 'string' || typeof j.model !== 'string')) return '"judge" that is not { baseUrl, model, apiKeyEnv? }';
  if (s.judgePanel !== undefined) {
    try {
      checkJudgePanel(s.judgePanel, 'judgePanel');
    } catch (error) {
      return errorMessage(error);
    }
  }
  if (!count(s.sftSteps) || !count(s.grpoSteps)) return '"sftSteps"/"grpoSteps" that are not step counts';
  const o = s.options as Partial<TrainingRunOptions> | undefined;
  if (typeof o !== 'object' || o === null) return 'no "options"';
  if (!count(o.seed) || !count(o.maxTokens) || (o.maxTokens as number) < 1 || !count(o.evalTasks)) return '"options" whose seed, maxTokens or evalTasks are not counts';
  if (o.warmup !== null && (typeof o.warmup !== 'object' || o.warmup === undefined || !count(o.warmup.steps) || !count(o.warmup.batchSize) || !(o.warmup.lr > 0))) return '"options.warmup" that is neither null nor { demonstrations, steps, batchSize, lr }';
  if (o.grpo !== null && (typeof o.grpo !== 'object' || o.grpo === undefined || !count(o.grpo.steps) || !count(o.grpo.groupSize) || !count(o.grpo.tasksPerStep))) return '"options.grpo" that is neither null nor { steps, tasksPerStep, groupSize, ... }';
  if ((o.warmup?.steps ?? 0) !== s.sftSteps || (o.grpo?.steps ?? 0) !== s.grpoSteps) return 'step counts that disagree between "options" and "sftSteps"/"grpoSteps"';
  return undefined;
}

/** Writes model/ (merged when LoRA) and, with LoRA, adapter/ in the PEFT format. */
async function writeExports(outDir: string, backend: ModelBackend, settings: RunSettings): Promise<void> {
  const parameters = await backend.getParameters();
  // With the tokenizer files the folder is a model again: tabrl eval --model local:DIR/model, generate, train --model.
  const model = new Map([...exportMergedModel(parameters, backend.config, settings.lora), ...tokenizerFilesOf(settings.model)]);
  writingFile(join(outDir, 'model'), () => writeFolderAtomically(join(outDir, 'model'), model));
  if (settings.lora) writingFile(join(outDir, 'adapter'), () => writeFolderAtomically(join(outDir, 'adapter'), exportPeftAdapter(parameters, backend.config, settings.lora!, settings.model)));
}

/** The tokenizer files of the model a run started from: the byte tokenizer's for tiny, those of its folder otherwise (nano's included). */
function tokenizerFilesOf(spec: string): Map<string, Uint8Array> {
  if (spec === 'tiny') return byteTokenizerFiles();
  const folder = modelFolderOf(spec);
  const names = ['tokenizer.json', 'tokenizer_config.json', 'generation_config.json', 'chat_template.jinja'];
  return new Map(names.filter((name) => existsSync(join(folder, name))).map((name) => [name, new Uint8Array(readFileSync(join(folder, name)))]));
}

/**
 * Writes the files into DIR.tmp (flushed to disk, then marked COMPLETE), moves the old DIR aside to
 * DIR.old, renames DIR.tmp to DIR and only then deletes DIR.old: at every moment one complete copy
 * is on disk, and --resume finds it (findCheckpoint).
 */
function writeFolderAtomically(dir: string, files: Map<string, Uint8Array>, options: { markComplete?: boolean } = {}): void {
  const temporary = `${dir}.tmp`;
  const old = `${dir}.old`;
  rmSync(temporary, { recursive: true, force: true });
  mkdirSync(temporary, { recursive: true });
  for (const [name, bytes] of [...files, ...(options.markComplete ? [[CHECKPOINT_COMPLETE, new Uint8Array()] as const] : [])]) {
    const path = join(temporary, name);
    writeFileSync(path, bytes);
    const fd = openSync(path, 'r');
    fsyncSync(fd);
    closeSync(fd);
  }
  if (existsSync(dir)) {
    rmSync(old, { recursive: true, force: true });
    renameSync(dir, old);
  }
  renameSync(temporary, dir);
  rmSync(old, { recursive: true, force: true });
}

/** The run's settings from the command-line flags of a new run. */
function settingsFromFlags(positionals: string[], values: Record<string, string | boolean | undefined>): RunSettings {
  const given = positionals[0];
  if (!given || positionals.length > 1) throw new CliError(`give exactly one environment\n\n${TRAIN_USAGE}`, 2);
  const quick = values.quick === true;
  const preset = values.lesson === true || quick ? lessonPreset(given, quick) : undefined;
  if ((values.lesson === true || quick) && preset === undefined) throw new CliError(`--lesson and --quick know the lessons' environments (wordle, reverse-text), not "${given}"`, 2);
  const modelName = typeof values.model === 'string' ? values.model : preset?.model;
  if (modelName === undefined) throw new CliError(`--model is required (tiny, nano, or a model folder)\n\n${TRAIN_USAGE}`, 2);
  const lesson = preset?.options;
  const integer = (flag: string, generic: number, min = 0): number => {
    const text = values[flag];
    const fallback = lesson === undefined ? generic : (lessonDefault(lesson, flag) ?? generic);
    if (text === undefined) return fallback;
    const value = Number(text);
    if (!Number.isInteger(value) || value < min) throw new CliError(`--${flag} must be an integer ≥ ${min}, got "${String(text)}"`, 2);
    return value;
  };
  const positive = (flag: string, generic: number): number => {
    const text = values[flag];
    const fallback = lesson === undefined ? generic : (lessonDefault(lesson, flag) ?? generic);
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
  const judge = judgeSettingsFromFlags(values as Record<string, string | undefined>);
  if (judge && values.judges !== undefined) throw new CliError('give one judge (--judge-base-url, --judge-model) or a panel (--judges FILE), not both', 2);
  const judgePanel = values.judges === undefined ? undefined : readJudgePanelFile(values.judges as string);
  const sftSteps = integer('sft-steps', 100);
  const grpoSteps = integer('steps', 50);
  const model = modelName === 'tiny' || modelName === 'nano' ? modelName : resolve(modelName);
  // Real checkpoints train LoRA adapters by default; tiny and nano are small enough to train whole.
  const loraRank = integer('lora-rank', model === 'tiny' || model === 'nano' ? 0 : 16);
  const grpo = grpoSteps > 0 ? grpoFromFlags(values, grpoSteps, { integer, positive, nonNegative }) : null;
  const poolRefresh = poolRefreshFromFlags(values, grpo?.maxAsync ?? 0);
  return {
    // A file path is kept absolute, so that --resume works from any folder.
    spec: isEnvironmentPath(given) ? resolve(given) : given,
    envArgs: { ...(preset?.envArgs ?? {}), ...parseEnvArgs(values['env-args'] as string | undefined) },
    model,
    backend: parseBackendName(values.backend as string | undefined),
    ...activationCheckpointingFromFlags(values['activation-checkpointing'] as string | undefined, parseBackendName(values.backend as string | undefined)),
    ...memoryBudgetFromFlags(values['memory-budget'] as string | undefined, parseBackendName(values.backend as string | undefined)),
    lora: loraRank > 0 ? { rank: loraRank, alpha: 2 * loraRank, targetModules: [...LORA_TARGET_MODULES] } : null,
    ...(judge ? { judge } : {}),
    ...(judgePanel ? { judgePanel } : {}),
    ...(poolRefresh ? { poolRefresh } : {}),
    sftSteps,
    grpoSteps,
    options: {
      seed: integer('seed', 0),
      maxTokens: integer('max-tokens', 32, 1),
      evalTasks: integer('eval-tasks', 32),
      checkpointEvery: integer('checkpoint-every', 10),
      ...(lesson?.evalTemperature !== undefined ? { evalTemperature: lesson.evalTemperature } : {}),
      warmup: sftSteps > 0 ? { demonstrations: integer('demonstrations', 256, 1), steps: sftSteps, batchSize: integer('sft-batch', 16, 1), lr: positive('sft-lr', 3e-3) } : null,
      grpo,
    },
  };
}

/** A lesson preset's value for a flag (the fallback when the flag is not given), or undefined when the preset has none. */
function lessonDefault(lesson: TrainingRunOptions, flag: string): number | undefined {
  const byFlag: Record<string, number | undefined> = {
    'sft-steps': lesson.warmup?.steps ?? 0,
    demonstrations: lesson.warmup?.demonstrations,
    'sft-batch': lesson.warmup?.batchSize,
    'sft-lr': lesson.warmup?.lr,
    steps: lesson.grpo?.steps ?? 0,
    'tasks-per-step': lesson.grpo?.tasksPerStep,
    group: lesson.grpo?.groupSize,
    lr: lesson.grpo?.schedule?.lr,
    'max-async': lesson.grpo?.maxAsync,
    'max-tokens': lesson.maxTokens,
    'eval-tasks': lesson.evalTasks,
    seed: lesson.seed,
    'checkpoint-every': lesson.checkpointEvery,
  };
  return byFlag[flag];
}

type NumberFlag = (flag: string, fallback: number, min?: number) => number;

/** GRPO settings from the flags; only the knobs given are set, so the trainer's defaults (docs/training.md) apply to the rest. */
function grpoFromFlags(values: Record<string, string | boolean | undefined>, steps: number, parse: { integer: NumberFlag; positive: NumberFlag; nonNegative: NumberFlag }): NonNullable<TrainingRunOptions['grpo']> {
  const { integer, positive, nonNegative } = parse;
  const choice = <T extends string>(flag: string, allowed: readonly T[]): T | undefined => {
    const text = values[flag];
    if (text === undefined) return undefined;
    if (!allowed.includes(text as T)) throw new CliError(`--${flag} must be one of ${allowed.join(', ')}, got "${String(text)}"`, 2);
    return text as T;
  };
  const given = (flag: string) => values[flag] !== undefined;
  const tasksPerStep = integer('tasks-per-step', 4, 1);
  const lrSchedule = choice('lr-schedule', ['constant', 'cosine'] as const);
  const grpo: NonNullable<TrainingRunOptions['grpo']> & Partial<GrpoOptions> = {
    steps,
    tasksPerStep,
    groupSize: integer('group', 8, 2),
    schedule: { lr: positive('lr', 1e-3), ...(given('lr-warmup') ? { warmupSteps: integer('lr-warmup', 0) } : {}), ...(lrSchedule === 'cosine' ? { kind: 'cosine', totalSteps: steps } : {}) },
    maxAsync: integer('max-async', 1),
    klBeta: nonNegative('kl-beta', 0),
  };
  const lossType = choice('loss-type', LOSS_TYPES);
  const scaleRewards = choice('scale-rewards', ['group', 'batch', 'none'] as const);
  const importanceSampling = choice('importance-sampling', ['token', 'sequence'] as const);
  const turnCredit = choice('turn-credit', TURN_CREDITS);
  const staleRollouts = choice('stale-rollouts', ['resample', 'downweight'] as const);
  if (lossType) grpo.lossType = lossType;
  if (scaleRewards) grpo.scaleRewards = scaleRewards;
  if (importanceSampling) grpo.importanceSampling = importanceSampling;
  if (turnCredit) grpo.turnCredit = turnCredit;
  if (staleRollouts) grpo.staleRollouts = staleRollouts;
  if (given('clip-low')) grpo.clipLow = nonNegative('clip-low', 0.2);
  if (given('clip-high')) grpo.clipHigh = nonNegative('clip-high', 0.28);
  if (given('temperature')) grpo.temperature = positive('temperature', 1);
  if (values['mask-truncated'] === true) grpo.maskTruncated = true;
  if (values['keep-equal-groups'] === true) grpo.dropUninformativeGroups = false;
  if (values['dynamic-sampling'] === true) grpo.dynamicSampling = true;
  if (given('max-tasks-per-step')) {
    if (values['dynamic-sampling'] !== true) throw new CliError('--max-tasks-per-step bounds --dynamic-sampling; give both, or neither', 2);
    grpo.maxTasksPerStep = integer('max-tasks-per-step', 3 * tasksPerStep, tasksPerStep);
  }
  if (given('entropy-top-q')) {
    const q = positive('entropy-top-q', 1);
    if (q > 1) throw new CliError(`--entropy-top-q is a share of the tokens, in (0, 1]; got "${String(values['entropy-top-q'])}"`, 2);
    grpo.entropyTopQ = q;
  }
  if (given('max-staleness')) grpo.maxStaleness = integer('max-staleness', 0);
  if (given('stale-rollouts') && !given('max-staleness')) throw new CliError('--stale-rollouts says what to do past --max-staleness; give --max-staleness too', 2);
  if (given('echo-weight')) grpo.echoWeight = nonNegative('echo-weight', 0);
  if (given('micro-batch')) grpo.microBatchSize = integer('micro-batch', 8, 1);
  if (given('max-grad-norm')) grpo.maxGradNorm = nonNegative('max-grad-norm', 1);
  if (given('weight-decay')) grpo.weightDecay = nonNegative('weight-decay', 0);
  return grpo;
}

/** The progress line of one GRPO step: reward, pass rate, loss, and the diagnostics that explain a run that does not learn. */
export function describeGrpoStep(m: GrpoStepMetrics): string {
  const parts = [
    `reward ${m.reward.mean.toFixed(3)} ± ${m.reward.std.toFixed(3)}`,
    `pass ${m.passRate.toFixed(2)}`,
    `loss ${m.loss.toFixed(4)}`,
    `H ${m.entropy.toFixed(2)}`,
    `clip ${(m.clipFractionLow * 100).toFixed(0)}/${(m.clipFractionHigh * 100).toFixed(0)}%`,
    `len ${m.completionLength.mean.toFixed(1)}/${m.completionLength.max}`,
    `trunc ${(m.truncatedFraction * 100).toFixed(0)}%`,
    `flat ${(m.zeroStdFraction * 100).toFixed(0)}%`,
    `stale ${m.staleness}`,
    ...(m.echoLoss > 0 ? [`echo ${m.echoLoss.toFixed(3)}`] : []),
    `${m.tokensPerSecond.toFixed(0)} tok/s`,
    `${(m.timings.stepMs / 1000).toFixed(1)} s`,
  ];
  // Rollouts whose model, environment or reward failed: a reward that throws scores 0, which looks like a model that learns nothing.
  const errors = m.rolloutsWithErrors > 0 ? `  errors ${m.rolloutsWithErrors}/${m.rollouts}${m.firstError ? ` (first: ${m.firstError})` : ''}` : '';
  return parts.join('  ') + (m.skipped ? `  (${m.skipped})` : '') + errors;
}

function describeSummary(summary: EvaluationSummary): string {
  const firstError = Object.values(summary.firstErrors)[0];
  const errors = summary.rolloutsWithErrors > 0 ? `; ${summary.rolloutsWithErrors} of ${summary.numRollouts} rollouts with errors${firstError ? ` (first: ${firstError})` : ''}` : '';
  return `reward ${summary.reward.mean.toFixed(3)} ± ${summary.reward.std.toFixed(3)}, pass rate ${summary.passRate.toFixed(2)}${errors}`;
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
