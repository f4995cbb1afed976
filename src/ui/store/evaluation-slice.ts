/** The evaluation slice: settings, and the run in progress or last finished (progress, records, summary, failure). */
import type { StateCreator } from 'zustand';
import type { EvaluationSummary, RolloutRecord } from '../../envs/index.ts';
import type { EnvironmentInfo } from '../../workers/sandbox-bridge.ts';
import type { SharedEvaluation } from '../share/url-state.ts';
import type { PlaygroundState } from './index.ts';

/** Evaluation settings; each is explained in the panel and carried by share links. */
export interface EvaluationSettings extends SharedEvaluation {
  /** JSON text of the arguments passed to `loadEnvironment(args)`. */
  argsJson: string;
}

/** The defaults: small enough to finish in seconds against the expert. */
export const DEFAULT_SETTINGS: EvaluationSettings = {
  numTasks: 10,
  rolloutsPerTask: 2,
  concurrency: 4,
  maxTokens: 512,
  temperature: 0.7,
  seed: 0,
  timeLimitMs: 5000,
  argsJson: '{}',
};

/** Where a run is. */
export type RunStatus = 'idle' | 'compiling' | 'running' | 'stopping' | 'done' | 'failed';

/** The current or last run. */
export interface RunState {
  status: RunStatus;
  /** The environment's name as the sandbox reported it. */
  environment: EnvironmentInfo | null;
  done: number;
  total: number;
  startedAt: number;
  finishedAt: number | null;
  records: RolloutRecord[];
  summary: EvaluationSummary | null;
  stoppedEarly: string | null;
  /** Why the run failed (compile errors, a time limit, a load error). */
  failure: string | null;
  /** When the person paused the run (no new rollouts start; running ones finish); absent while it runs. */
  pausedAt?: number;
}

/** The state before any run. */
export const IDLE_RUN: RunState = {
  status: 'idle',
  environment: null,
  done: 0,
  total: 0,
  startedAt: 0,
  finishedAt: null,
  records: [],
  summary: null,
  stoppedEarly: null,
  failure: null,
};

/** Evaluation state. */
export interface EvaluationSlice {
  settings: EvaluationSettings;
  run: RunState;
  /** The index in `run.records` of the rollout open in the viewer. */
  selectedRecord: number;
  setSettings(settings: Partial<EvaluationSettings>): void;
  updateRun(update: Partial<RunState> | ((run: RunState) => Partial<RunState>)): void;
  selectRecord(index: number): void;
}

/** Creates the evaluation slice. */
export const createEvaluationSlice: StateCreator<PlaygroundState, [], [], EvaluationSlice> = (set) => ({
  settings: DEFAULT_SETTINGS,
  run: IDLE_RUN,
  selectedRecord: 0,
  setSettings: (settings) => set((state) => ({ settings: { ...state.settings, ...settings } })),
  updateRun: (update) => set((state) => ({ run: { ...state.run, ...(typeof update === 'function' ? update(state.run) : update) } })),
  selectRecord: (selectedRecord) => set({ selectedRecord }),
});
