/**
 * `tabrl train <env> --model <tiny | model-dir>`: the training run of src/rl/training-run.ts in
 * Node — measure, SFT warm-up on the environment's expert demonstrations, measure, GRPO, measure —
 * printing one line (or, with --json, one JSON object) per step, and writing metrics.jsonl,
 * report.json and the trained model folder into --out.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { ChatClient, EvaluationSummary } from '../envs/index.ts';
import { warmupExpert } from './warmup-expert.ts';
import type { ModelBackend } from '../gpu/model/backend.ts';
import { LORA_TARGET_MODULES, type LoraConfig } from '../gpu/model/layout.ts';
import { parseCheckpoint } from '../rl/checkpoint.ts';
import { exportMergedModel, exportPeftAdapter } from '../rl/export.ts';
import type { SftStepMetrics } from '../rl/sft-trainer.ts';
import { BrokenRewardsError, type GrpoOptions, type GrpoStepMetrics } from '../rl/grpo-trainer.ts';
import { lessonPreset, lessonSettings } from '../rl/lesson.ts';
import { trainingRunOptionsFrom } from '../rl/training-options.ts';
import { TRAINING_KNOBS, withOverrides } from '../rl/training-settings.ts';
import { KNOB_FLAG_OPTIONS, knobSettingsFromFlags, knobUsage } from './train-flags.ts';
import { runTraining, type TrainingEvaluation, type TrainingPosition, type TrainingRunOptions } from '../rl/training-run.ts';
import { CliError } from './cli-error.ts';
import { parseFlags } from './flags.ts';
import { DEFAULT_TIME_LIMIT_MS } from './isolated-environment.ts';
import { closeEnvironment, isEnvironmentPath, loadEnvironmentSpec } from './load-environment.ts';
import { checkFinite, isShippedModel, modelFolderOf, openModel, parseBackendName, type OpenedModel } from './open-model.ts';
import { shippedModelIds } from '../models/shipped-models.ts';
import { byteTokenizerFiles } from '../gpu/io/byte-model-folder.ts';
import { prepareOutputFolder } from './results-writer.ts';
import { onStopSignal } from './stop-signals.ts';
import { letEventsRun } from './let-events-run.ts';
import { createJudgeClient, judgeUsage, judgeSettingsFromFlags, type JudgeSettings } from './judge.ts';
import { lendSimulator, recordedSimulatorNote, SIMULATOR_FLAG_OPTIONS, simulatorSettingsFromFlags, simulatorUsage } from './simulator-role.ts';
import type { RoleSettings } from './model-roles.ts';
import { checkJudgePanel, createJudgePanelClient, readJudgePanelFile, writeTrainingPanelReport, type JudgePanelSettings } from './judge-panel-file.ts';
import { checkSavedPool, createPoolRefresher, POOL_REFRESH_OPTIONS, POOL_REFRESH_USAGE, poolRefreshFromFlags, type PoolRefreshSettings, type SavedTaskPool } from './train-pool-refresh.ts';
import { errorMessage } from '../common/error-message.ts';
import { capText } from '../isolation/message-check.ts';
import { OutputWriteError, recordRunStatus, writingFile } from './run-status.ts';
import { fileCheckpointStore, findCheckpoint, writeFolderAtomically } from './train-files.ts';
import { tabrlVersion } from './version.ts';

/** Usage text of `tabrl train`. */
const TRAIN_USAGE = `Usage: tabrl train <env-name | path/to/env.ts> --model <tiny | ${shippedModelIds().join(' | ')} | model-dir> [options]
       tabrl train <wordle | reverse-text | lesson 7's file> --lesson | --quick [options]

Measures the model on held-out tasks, warms it up with SFT on demonstrations made by the
environment's expert (built-in environments; for tasks planted backwards, their planted calls, then
the answer), measures again, trains with GRPO, and measures a last time.

Options:
  --model M              tiny (TabRL's from-scratch preset), nano (TabRL's small pretrained byte-level model,
                         shipped in public/models/nano), nano-2m (its larger sibling), nano-wordle (nano's shape,
                         pretrained on varied Wordle games), nano-tools (nano's shape, pretrained to carry ids
                         into tool calls), or a Hugging Face-style folder (required
                         without --lesson)
  --lesson               the lesson's preset for the environment (wordle: lesson 6, nano-wordle on the compact Wordle;
                         reverse-text: the default lesson, nano; a file whose environment is parcel-desk:
                         lesson 7, nano-tools on the Parcelo planted tasks): its model, --env-args and settings,
                         which other flags override
  --quick                the lesson's preset cut to a few minutes on a software adapter or the CPU (implies --lesson)
  --backend B            cpu (default: the fast WASM backend on every core), cpu-reference (the plain-TypeScript oracle)
                         or webgpu (Dawn; the software adapter where there is no GPU)

${knobUsage()}

${POOL_REFRESH_USAGE}

Other options:
  --env-args JSON        arguments for the environment's loadEnvironment(args)
  --out DIR              output folder (default runs/train-<env>-<time>); one that holds a run is refused
  --overwrite            replace the run in --out
  --resume DIR           continue the run in DIR from its last checkpoint, with its settings
  --time-limit SECONDS   an environment file's code may run this long without returning, per stretch (default 5)
${judgeUsage(25)}
  --judges FILE          a panel of judges lent as the reward's one judge, as in tabrl eval --judges: JSON
                         {"aggregation": "mean|majority|unanimous", "judges": [{"name", "baseUrl", "model", "apiKeyEnv"?}, …]};
                         its agreement over the run goes to DIR/judge-panel.json
${simulatorUsage(25)}
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
  /** A tool simulator lent to the environment as args.simulatorClient (`--simulator-*`). */
  simulator?: RoleSettings;
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

/** Runs `tabrl train`; returns the exit code. */
export async function runTrain(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags({
    args: argv,
    allowPositionals: true,
    options: {
      model: { type: 'string' },
      backend: { type: 'string' },
      ...KNOB_FLAG_OPTIONS,
      'env-args': { type: 'string' },
      out: { type: 'string' },
      overwrite: { type: 'boolean' },
      resume: { type: 'string' },
      'time-limit': { type: 'string' },
      'judge-base-url': { type: 'string' },
      'judge-model': { type: 'string' },
      'judge-api-key-env': { type: 'string' },
      judges: { type: 'string' },
      ...SIMULATOR_FLAG_OPTIONS,
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
    if (positionals.length > 0 || given.length > 0)
      throw new CliError(`--resume continues a run with the settings in its checkpoint; leave out ${[...positionals, ...given.map((flag) => `--${flag}`)].join(', ')}`, 2);
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
    // An environment file's lesson is found by the name of the environment it loads (lesson 7's file: parcel-desk).
    const given = positionals[0];
    const fileLesson = (values.lesson === true || values.quick === true) && given !== undefined && positionals.length === 1 && isEnvironmentPath(given);
    settings = settingsFromFlags(positionals, values, fileLesson ? await environmentNameOf(resolve(given), values['env-args'] as string | undefined, timeLimitMs) : undefined);
    outDir = values.out ?? join('runs', `train-${settings.spec.replace(/[^\w.-]+/g, '_')}-${new Date().toISOString().replace(/[:.]/g, '-')}`);
    prepareOutputFolder(outDir, { overwrite: values.overwrite === true, what: 'a training run', resumeHint: `tabrl train --resume ${outDir}` });
  }
  const panel = settings.judgePanel ? createJudgePanelClient(settings.judgePanel, 120_000) : undefined;
  const judge = panel ? { client: panel, model: 'judge-panel' } : settings.judge ? { client: createJudgeClient(settings.judge, 120_000), model: settings.judge.model } : undefined;
  // status.json says where the run stands: "running" until it ends, then how it ended, whatever stopped it.
  const status = { path: join(outDir, 'status.json'), fields: { command: 'train', environment: settings.spec, started_at: new Date().toISOString() } };
  recordRunStatus(status.path, 'running', status.fields);
  const ended = (how: 'completed' | 'interrupted' | 'failed', more: Record<string, unknown> = {}) =>
    recordRunStatus(status.path, how, { ...status.fields, ...more, finished_at: new Date().toISOString() });
  let env: Awaited<ReturnType<typeof loadEnvironmentSpec>> | undefined;
  try {
    const simulator = settings.simulator ? await lendSimulator(settings.simulator, 120_000) : undefined;
    env = await loadEnvironmentSpec(settings.spec, { args: settings.envArgs, isolation: { timeLimitMs }, ...(judge ? { judge } : {}), ...(simulator ? { simulator } : {}) });
    if (resumedPool) env.dataset.splice(0, env.dataset.length, ...resumedPool.tasks);
    const code = await train(env, settings, {
      outDir,
      checkpointDir,
      resumeFrom,
      history,
      ...(resumedPool ? { savedPool: resumedPool } : {}),
      json: values.json === true,
      onForcedExit: () => ended('interrupted'),
    });
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

/**
 * Returns a trainer's micro-batch chooser on WebGPU (GRPO's, or the SFT warm-up's when `phase` names
 * it): per step length T, the largest micro-batch up to maxMicroBatch that fits the budget (or
 * `forced`, checked), said on stderr whenever it changes.
 */
function microBatchChooser(
  memory: NonNullable<OpenedModel['memory']>,
  settings: RunSettings,
  choose: { maxMicroBatch: number; forced?: number; phase: '' | 'SFT' },
  say: (text: string) => void,
): (T: number) => number {
  const budgetBytes = settings.memoryBudgetMiB === undefined ? memory.defaultBudgetBytes : settings.memoryBudgetMiB * 2 ** 20;
  const { maxMicroBatch, forced } = choose;
  const prefix = choose.phase === '' ? '' : `${choose.phase} `;
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
    if (choice.B !== said) say(`   ${prefix}micro-batch ${choice.B} at T ${T}: ${why}`);
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
  run: { outDir: string; checkpointDir: string | undefined; resumeFrom: TrainingPosition | undefined; history: RunHistory; json: boolean; onForcedExit: () => void; savedPool?: SavedTaskPool },
): Promise<number> {
  const { spec, envArgs, sftSteps, grpoSteps } = settings;
  const { outDir, history } = run;
  let resumeFrom = run.resumeFrom;
  const values = { json: run.json };
  if (env.evaluationTasks.length === 0 && settings.options.evalTasks > 0) throw new CliError(`${env.name} has no evaluation tasks; check --env-args, or pass --eval-tasks 0`, 2);
  if (env.dataset.length === 0 && settings.grpoSteps > 0) throw new CliError(`${env.name} has no training tasks; check --env-args, or pass --steps 0`, 2);
  const expert: ChatClient | null = settings.options.warmup && resumeFrom?.phase !== 'grpo' ? await warmupExpert(spec, env) : null;
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
  const kept =
    resumeFrom && existsSync(metricsPath)
      ? readFileSync(metricsPath, 'utf8')
          .split('\n')
          .filter((line) => line !== '')
          .slice(0, history.metricsLines)
      : [];
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
  if (model.memory && options.grpo) {
    const grpo = options.grpo;
    // a step trains at most its tasks × group sequences (the flags always set both; 4 and 8 are the trainer's defaults)
    const maxMicroBatch = (grpo.maxTasksPerStep ?? grpo.tasksPerStep ?? 4) * (grpo.groupSize ?? 8);
    const forced = (grpo as Partial<GrpoOptions>).microBatchSize;
    options.grpo = { ...grpo, microBatchFor: microBatchChooser(model.memory, settings, { maxMicroBatch, ...(forced === undefined ? {} : { forced }), phase: '' }, say) };
  }
  // the SFT warm-up's micro-batch too: up to its whole batch (--micro-batch is GRPO's)
  if (model.memory && options.warmup) options.warmup = { ...options.warmup, microBatchFor: microBatchChooser(model.memory, settings, { maxMicroBatch: options.warmup.batchSize, phase: 'SFT' }, say) };
  say(
    `${resumeFrom ? `resuming at ${resumeFrom.phase} step ${resumeFrom.nextStep}:` : 'training'} ${model.label} on ${env.name} · ${model.device} · sampling on ${model.createDecoder ? 'the GPU (WebGPU decoder)' : 'the CPU decoder'}`,
  );
  const refreshPool = settings.poolRefresh ? await createPoolRefresher(env, settings.poolRefresh, { record, say }, run.savedPool) : undefined;
  // The session's checkpoints go to checkpoint/ with the run's settings, history and task pool (what --resume reads).
  const checkpoints = fileCheckpointStore(
    join(outDir, 'checkpoint'),
    model.backend,
    () =>
      ({
        settings,
        history: { ...history, metricsLines },
        ...(refreshPool ? { pool: { tasks: [...env.dataset], refreshes: refreshPool.refreshes(), retired: [...refreshPool.retired] } } : {}),
      }) satisfies SavedRun,
  );

  const interrupt = onStopSignal({ beforeForcedExit: run.onForcedExit });
  let report;
  try {
    report = await runTraining(env, model, expert, options, {
      signal: interrupt.signal,
      checkpoints,
      onPhase: (phase, detail) => say(`== ${phase}: ${detail}`),
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
      onGrpoStep: async (m) => {
        history.grpo.push(m);
        record({ phase: 'grpo', ...m });
        say(`   grpo ${m.step + 1}/${grpoSteps}  ${describeGrpoStep(m)}`);
        // No yield here (unlike SFT): GRPO's rollouts already give Ctrl-C its turn, and a stop let in
        // between a step and its checkpoint would abort the rollouts sampled ahead that it saves.
      },
      // The refresh measures the policy once it has this step's weights (after the sync), and before the step's checkpoint.
      ...refreshPool?.hooks,
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
  writingFile(join(outDir, 'report.json'), () =>
    writeFileSync(
      join(outDir, 'report.json'),
      `${JSON.stringify({ environment: spec, env_args: envArgs, model: settings.model, device: model.device, ...tabrlVersion(), options, ...whole, interrupted: interrupt.signal.aborted }, null, 2)}\n`,
    ),
  );
  // A run stopped before its first checkpoint (during the first measurement) has nothing to resume from.
  const resumable = existsSync(join(outDir, 'checkpoint', 'state.json'));
  say(`wrote ${metricsPath}, ${join(outDir, 'report.json')}, ${resumable ? 'the checkpoint ' : ''}and the model to ${outDir}`);
  if (interrupt.signal.aborted) {
    say(resumable ? `interrupted: continue with tabrl train --resume ${outDir}` : `interrupted before the first checkpoint (nothing was trained yet): start it again with --out ${outDir} --overwrite`);
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
  const saved: SavedRun =
    'settings' in run ? (run as unknown as SavedRun) : { settings: run as unknown as RunSettings, history: { evaluations: [], sft: [], grpo: [], metricsLines: Number.MAX_SAFE_INTEGER } };
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
  if (s.memoryBudgetMiB !== undefined && !(Number.isInteger(s.memoryBudgetMiB) && s.memoryBudgetMiB > 0))
    return `"memoryBudgetMiB" ${JSON.stringify(s.memoryBudgetMiB)}, expected a whole number of MiB`;
  const j = s.judge as Partial<JudgeSettings> | undefined;
  if (j !== undefined && (typeof j !== 'object' || j === null || typeof j.baseUrl !== 'string' || typeof j.model !== 'string')) return '"judge" that is not { baseUrl, model, apiKeyEnv? }';
  const m = s.simulator as Partial<RoleSettings> | undefined;
  if (m !== undefined && (typeof m !== 'object' || m === null || typeof m.model !== 'string')) return '"simulator" that is not { baseUrl?, model, apiKeyEnv? }';
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
  if (o.warmup !== null && (typeof o.warmup !== 'object' || o.warmup === undefined || !count(o.warmup.steps) || !count(o.warmup.batchSize) || !(o.warmup.lr > 0)))
    return '"options.warmup" that is neither null nor { demonstrations, steps, batchSize, lr }';
  if (o.grpo !== null && (typeof o.grpo !== 'object' || o.grpo === undefined || !count(o.grpo.steps) || !count(o.grpo.groupSize) || !count(o.grpo.tasksPerStep)))
    return '"options.grpo" that is neither null nor { steps, tasksPerStep, groupSize, ... }';
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

/** The run's settings from the command-line flags of a new run: the table's defaults, the lesson's row over them (--lesson, --quick), the flags over both. */
function settingsFromFlags(positionals: string[], values: Record<string, string | boolean | undefined>, environmentName?: string): RunSettings {
  const given = positionals[0];
  if (!given || positionals.length > 1) throw new CliError(`give exactly one environment\n\n${TRAIN_USAGE}`, 2);
  const quick = values.quick === true;
  const lessonName = environmentName ?? given;
  const preset = values.lesson === true || quick ? lessonPreset(lessonName, quick) : undefined;
  if ((values.lesson === true || quick) && preset === undefined)
    throw new CliError(`--lesson and --quick know the lessons' environments (wordle, reverse-text, and lesson 7's file, whose environment is parcel-desk), not "${lessonName}"`, 2);
  const modelName = typeof values.model === 'string' ? values.model : preset?.model;
  if (modelName === undefined) throw new CliError(`--model is required (tiny, ${shippedModelIds().join(', ')}, or a model folder)\n\n${TRAIN_USAGE}`, 2);
  const knobs = knobSettingsFromFlags(values, withOverrides(preset ? (lessonSettings(lessonName, quick) ?? {}) : {}));
  const backend = parseBackendName(values.backend as string | undefined);
  for (const name of ['activationCheckpointing', 'memoryBudget'] as const) {
    if (values[TRAINING_KNOBS[name].flag] !== undefined && backend !== 'webgpu') throw new CliError(WEBGPU_ONLY[name], 2);
  }
  const judge = judgeSettingsFromFlags(values as Record<string, string | undefined>);
  const simulator = simulatorSettingsFromFlags(values);
  const recorded = recordedSimulatorNote(given, simulator);
  if (recorded) console.error(recorded);
  if (judge && values.judges !== undefined) throw new CliError('give one judge (--judge-base-url, --judge-model) or a panel (--judges FILE), not both', 2);
  const judgePanel = values.judges === undefined ? undefined : readJudgePanelFile(values.judges as string);
  const model = modelName === 'tiny' || isShippedModel(modelName) ? modelName : resolve(modelName);
  // Real checkpoints train LoRA adapters by default; tiny and the shipped nanos are small enough to train whole.
  const loraRank = knobs.loraRank ?? (model === 'tiny' || isShippedModel(model) ? 0 : 16);
  const options = trainingRunOptionsFrom(knobs);
  const poolRefresh = poolRefreshFromFlags(values);
  return {
    // A file path is kept absolute, so that --resume works from any folder.
    spec: isEnvironmentPath(given) ? resolve(given) : given,
    envArgs: { ...(preset?.envArgs ?? {}), ...parseEnvArgs(values['env-args'] as string | undefined) },
    model,
    backend,
    ...(values['activation-checkpointing'] !== undefined ? { activationCheckpointing: knobs.activationCheckpointing } : {}),
    ...(knobs.memoryBudget !== null ? { memoryBudgetMiB: knobs.memoryBudget } : {}),
    lora: loraRank > 0 ? { rank: loraRank, alpha: 2 * loraRank, targetModules: [...LORA_TARGET_MODULES] } : null,
    ...(judge ? { judge } : {}),
    ...(simulator ? { simulator } : {}),
    ...(judgePanel ? { judgePanel } : {}),
    ...(poolRefresh ? { poolRefresh } : {}),
    sftSteps: knobs.sftSteps,
    grpoSteps: knobs.grpoSteps,
    options,
  };
}

/** The name of the environment an environment file loads (loaded once without its type check, then closed), for its lesson's preset. */
async function environmentNameOf(path: string, envArgsText: string | undefined, timeLimitMs: number): Promise<string> {
  const env = await loadEnvironmentSpec(path, { args: parseEnvArgs(envArgsText), isolation: { timeLimitMs }, typecheck: false });
  try {
    return env.name;
  } finally {
    closeEnvironment(env);
  }
}

/** Why a webgpu-only knob was refused on another backend. */
const WEBGPU_ONLY = {
  activationCheckpointing: '--activation-checkpointing is a setting of --backend webgpu; the cpu backend keeps every activation',
  memoryBudget: '--memory-budget is a setting of --backend webgpu, whose micro-batch it chooses; the cpu backends use --micro-batch',
} as const;

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
