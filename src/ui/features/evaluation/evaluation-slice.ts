/** The evaluation slice: settings, and the run in progress or last finished (progress, records, summary, failure). */
import type { StateCreator } from 'zustand';
import type { EvaluationSummary, RolloutRecord } from '../../../envs/index.ts';
import type { EnvironmentInfo } from '../../../workers/sandbox-bridge.ts';
import type { SharedEvaluation } from '../share/url-state.ts';
import type { PlaygroundState } from '../../store/index.ts';

/** Evaluation settings; each is explained in the panel and carried by share links. */
export interface EvaluationSettings extends SharedEvaluation {
  /** JSON text of the arguments passed to `loadEnvironment(args)`: the open file's (see `argsByEnvironment`). */
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
  /** The tool simulator lent to the environment as `args.simulatorClient` (its label, as `tabrl eval` records `simulator` in metadata.json); absent when none was lent. */
  simulator?: string;
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
  /**
   * The arguments JSON of each environment file, by its id: arguments belong to the file they were
   * set for, so opening another file shows its own (`{}` for one never given any) in `settings.argsJson`.
   */
  argsByEnvironment: Record<string, string>;
  run: RunState;
  /** The index in `run.records` of the rollout open in the viewer. */
  selectedRecord: number;
  setSettings(settings: Partial<EvaluationSettings>): void;
  /** Restores the files' remembered arguments (before a file is opened). */
  setArgsByEnvironment(argsByEnvironment: Record<string, string>): void;
  updateRun(update: Partial<RunState> | ((run: RunState) => Partial<RunState>)): void;
  selectRecord(index: number): void;
}

/** Creates the evaluation slice. */
export const createEvaluationSlice: StateCreator<PlaygroundState, [], [], EvaluationSlice> = (set) => ({
  settings: DEFAULT_SETTINGS,
  run: IDLE_RUN,
  selectedRecord: 0,
  argsByEnvironment: {},
  setSettings: (settings) =>
    set((state) => ({
      settings: { ...state.settings, ...settings },
      ...(settings.argsJson !== undefined && state.currentId ? { argsByEnvironment: { ...state.argsByEnvironment, [state.currentId]: settings.argsJson } } : {}),
    })),
  updateRun: (update) => set((state) => ({ run: { ...state.run, ...(typeof update === 'function' ? update(state.run) : update) } })),
  setArgsByEnvironment: (argsByEnvironment) => set({ argsByEnvironment }),
  selectRecord: (selectedRecord) => set({ selectedRecord }),
});

/** The store change that opens file `id`: the run panel's arguments become that file's own. */
export function argsOnOpening(state: Pick<PlaygroundState, 'settings' | 'argsByEnvironment'>, id: string | null): Pick<PlaygroundState, 'settings'> {
  const argsJson = (id !== null ? state.argsByEnvironment[id] : undefined) ?? DEFAULT_SETTINGS.argsJson;
  return { settings: argsJson === state.settings.argsJson ? state.settings : { ...state.settings, argsJson } };
}
