/** The training slice: the run panel's mode, warm-up and GRPO settings, the engine's state, the current training run and the list of past runs. */
import type { StateCreator } from 'zustand';
import type { EvaluationSummary } from '../../../envs/index.ts';
import { DEFAULT_LESSON_SETTINGS } from '../../../rl/lesson.ts';
import { withOverrides, type TrainingSettings as KnobSettings } from '../../../rl/training-settings.ts';
import type { EngineGrpoOptions, EngineInfo, EngineMemoryChoice, EngineSftOptions, EngineTrainingRollout, GrpoStepMetrics, SftStepMetrics } from '../../../workers/engine-bridge.ts';
import type { PlaygroundState } from '../../store/index.ts';
import type { JobSynthesis, PoolSynthesisSettings, TabPoolRefresh } from './pool-synthesis.ts';

/** What the run panel does: evaluate the policy, warm the in-tab model up with SFT, or train it with GRPO. */
export type RunMode = 'evaluate' | 'warmup' | 'train';

/** Warm-up and GRPO settings: a value for every knob of the one table (src/rl/training-settings.ts), which the panel renders. */
export type TrainingSettings = KnobSettings;

/** The tab's starting settings: the default lesson's row over the table's defaults (shared with `npm run bench:learn` and `tabrl train --lesson`). */
export const DEFAULT_TRAINING_SETTINGS: TrainingSettings = withOverrides(DEFAULT_LESSON_SETTINGS);

/** A measurement of the model kept with a run. */
export interface RunEvaluation {
  at: number;
  /** After how many SFT and GRPO steps it was taken. */
  sftSteps: number;
  grpoSteps: number;
  summary: EvaluationSummary;
  /** The tool simulator lent to the evaluation's environment (its label); absent when none was lent. */
  simulator?: string;
}

/** The environment a job trains on, kept with the job so Continue runs the same code: the file's name, its source and compiled code, and the arguments. */
export interface RunEnvironment {
  /** The saved file's name when the job started. */
  label: string;
  /** The built-in the file started from (its scripted expert makes warm-up demonstrations). */
  builtin?: string;
  source: string;
  /** The source compiled to the CommonJS the sandbox loads. */
  code: string;
  args: Record<string, unknown>;
}

/**
 * A run's last warm-up or GRPO job: the engine's settings for it, where its steps start in the run
 * (`offset`: the run's SFT or GRPO steps before it) and its next step. An unfinished one is what
 * Warm up / Train continue, with these settings, so the continued run takes the steps an
 * uninterrupted one would have. `environment` is absent in jobs stored before jobs kept their code.
 */
export type RunJob = (
  | { phase: 'sft'; offset: number; nextStep: number; options: EngineSftOptions; demonstrations: number; demonstrationSeed: number; environment?: RunEnvironment }
  | { phase: 'grpo'; offset: number; nextStep: number; options: EngineGrpoOptions; environment?: RunEnvironment; synthesis?: JobSynthesis }
) & {
  /** The tool simulator lent to the job's environment as `args.simulatorClient` (its label, as evaluations record it); absent when none was lent. */
  simulator?: string;
};

/** Whether a run's last job stopped before its last step; the job as the engine takes it now (see upgradeStoredJob). */
export function unfinishedJob(run: TrainingRun | null): RunJob | null {
  const job = run?.lastJob;
  return job && job.nextStep < job.options.steps ? upgradeStoredJob(job) : null;
}

/** A GRPO job stored before the engine took the trainer's options as they are kept its rate as `lr`; it becomes `schedule.lr` (the other names were the trainer's already). */
export function upgradeStoredJob(job: RunJob): RunJob {
  if (job.phase !== 'grpo' || job.options.schedule !== undefined) return job;
  const { lr, ...rest } = job.options as EngineGrpoOptions & { lr?: number };
  return { ...job, options: { ...rest, schedule: { lr: lr ?? DEFAULT_TRAINING_SETTINGS.grpoLr } } };
}

/** A training run as it is kept in IndexedDB (the weights are stored beside it as a checkpoint). */
export interface TrainingRun {
  id: string;
  /** The environment's name and arguments, and the settings the run started with. */
  environment: string;
  args: Record<string, unknown>;
  settings: TrainingSettings;
  seed: number;
  createdAt: number;
  updatedAt: number;
  sft: SftStepMetrics[];
  grpo: GrpoStepMetrics[];
  evaluations: RunEvaluation[];
  /** The step total (SFT + GRPO) of the last stored checkpoint, if any. */
  checkpointStep: number | null;
  /** The last warm-up or GRPO job (absent in runs stored before jobs were kept). */
  lastJob?: RunJob;
  /** The in-tab model the run trains ("tiny", a real preset's id, "local"); absent in runs stored before real models, which trained tiny. */
  model?: string;
  /** The task-pool refreshes of its GRPO jobs with synthesis, in order (absent when none ran). */
  poolRefreshes?: TabPoolRefresh[];
  /** What the run started from when it was not fresh weights: the imported file's description (e.g. "LoRA adapter from run.zip"). */
  startedFrom?: string;
}

/** Where the engine is. */
export interface EngineState {
  status: 'off' | 'starting' | 'ready' | 'failed';
  info: EngineInfo | null;
  /** What went wrong (no WebGPU, device lost), in words a person can act on. */
  error: string | null;
}

/** A warm-up or GRPO job in progress or last finished. */
export interface TrainingJob {
  status: 'idle' | 'running' | 'stopping' | 'done' | 'failed';
  mode: 'warmup' | 'train';
  /** What it is doing now, e.g. "making demonstrations". */
  phase: string;
  done: number;
  total: number;
  startedAt: number;
  /** When the current phase's steps started (for the ETA). */
  phaseStartedAt: number;
  /** Steps already done when the phase started (a continued job starts past 0; for the ETA). */
  doneAtPhaseStart?: number;
  /** When the person paused the job (it holds between steps until resumed); absent while it runs. */
  pausedAt?: number;
  failure: string | null;
  /** A note shown after it ends (kept demonstrations, stopped early, storage). */
  note: string | null;
}

/** Training state. */
export interface TrainingSlice {
  mode: RunMode;
  trainingSettings: TrainingSettings;
  engine: EngineState;
  job: TrainingJob;
  /** The run whose weights are in the engine (or the one reopened for viewing). */
  trainingRun: TrainingRun | null;
  /** The rollouts of the latest GRPO step. */
  latestRollouts: EngineTrainingRollout[];
  /** WebGPU: the micro-batch the latest GRPO step chose from the memory budget, and why not one more. */
  memoryChoice: EngineMemoryChoice | null;
  pastRuns: TrainingRun[];
  /** The optional charts shown under "More charts" (keys of GRPO_CHARTS; shown in that table's order). */
  chartPicks: string[];
  /** Task synthesis for the next new GRPO job (null: off); an unfinished job goes on with its own. */
  poolSynthesis: PoolSynthesisSettings | null;
  setPoolSynthesis(settings: PoolSynthesisSettings | null): void;
  setMode(mode: RunMode): void;
  setChartPicks(picks: string[]): void;
  setTrainingSettings(settings: Partial<TrainingSettings>): void;
  setEngine(engine: Partial<EngineState>): void;
  updateJob(update: Partial<TrainingJob>): void;
  setTrainingRun(run: TrainingRun | null | ((run: TrainingRun | null) => TrainingRun | null)): void;
  setLatestRollouts(rollouts: EngineTrainingRollout[]): void;
  setMemoryChoice(choice: EngineMemoryChoice | null): void;
  setPastRuns(runs: TrainingRun[]): void;
}

/** The optional charts shown until the person picks others: the ones the view always had. */
const DEFAULT_CHART_PICKS = ['kl', 'entropy', 'gradNorm', 'tokensPerSecond'];

/** The state before any job. */
export const IDLE_JOB: TrainingJob = { status: 'idle', mode: 'warmup', phase: '', done: 0, total: 0, startedAt: 0, phaseStartedAt: 0, failure: null, note: null };

/** Creates the training slice. */
export const createTrainingSlice: StateCreator<PlaygroundState, [], [], TrainingSlice> = (set) => ({
  mode: 'evaluate',
  trainingSettings: DEFAULT_TRAINING_SETTINGS,
  engine: { status: 'off', info: null, error: null },
  job: IDLE_JOB,
  trainingRun: null,
  latestRollouts: [],
  memoryChoice: null,
  pastRuns: [],
  chartPicks: DEFAULT_CHART_PICKS,
  poolSynthesis: null,
  setPoolSynthesis: (poolSynthesis) => set({ poolSynthesis }),
  setMode: (mode) => set({ mode }),
  setChartPicks: (chartPicks) => set({ chartPicks }),
  setTrainingSettings: (settings) => set((state) => ({ trainingSettings: { ...state.trainingSettings, ...settings } })),
  setEngine: (engine) => set((state) => ({ engine: { ...state.engine, ...engine } })),
  updateJob: (update) => set((state) => ({ job: { ...state.job, ...update } })),
  setTrainingRun: (run) => set((state) => ({ trainingRun: typeof run === 'function' ? run(state.trainingRun) : run })),
  setLatestRollouts: (latestRollouts) => set({ latestRollouts }),
  setMemoryChoice: (memoryChoice) => set({ memoryChoice }),
  setPastRuns: (pastRuns) => set({ pastRuns }),
});
