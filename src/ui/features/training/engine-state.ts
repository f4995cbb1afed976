/**
 * The engine as the training feature sees it: starting it once (and loading the chosen in-tab
 * model), its `EngineInfo` in the store (the adapter or CPU label the app shows, the model), and which weights it holds now: a run's
 * (`activeRunId`), fresh ones of a seed (`freshSeed`), and an evaluation of those fresh weights kept
 * as the next new run's "before" (`baseline`).
 */
import { onEngineError, startEngine } from '../../../workers/engine-bridge.ts';
import { errorMessage } from '../../../common/error-message.ts';
import { actionState } from '../../store/action-state.ts';
import { usePlayground } from '../../store/index.ts';
import { loadChosenModel } from '../models/model-actions.ts';
import type { RunEvaluation } from './training-slice.ts';

const store = usePlayground;

/** An evaluation of fresh weights made before any run: the "before" of the next new run that starts from them. */
export interface Baseline {
  evaluation: RunEvaluation;
  environment: string;
  seed: number;
  model: string;
}

/** What the UI knows of the engine's weights between calls (see action-state.ts). */
export const engineState = actionState(() => ({
  /** The run whose weights are in the engine now (null: the engine holds no run's weights). */
  activeRunId: null as string | null,
  /** Whether the engine's error listener is installed. */
  listening: false,
  /** The seed of the fresh (never trained) weights the engine holds, or null once it holds a run's, restored or imported ones. */
  freshSeed: null as number | null,
  /** An evaluation of those fresh weights made before any run. */
  baseline: null as Baseline | null,
}));

/** Starts the engine once (GPU device and tiny model) and loads the chosen in-tab model; failures (no WebGPU, no adapter, a download) land in the store with what to do. */
export async function ensureEngine(): Promise<void> {
  if (!engineState.listening) {
    engineState.listening = true;
    onEngineError((error) => store.getState().setEngine({ status: 'failed', error }));
  }
  const { engine, settings } = store.getState();
  if (engine.status !== 'ready') {
    store.getState().setEngine({ status: 'starting', error: null });
    try {
      const info = await startEngine(settings.seed);
      store.getState().setEngine({ status: 'ready', info, error: null });
      engineState.freshSeed = info.seed;
    } catch (error) {
      store.getState().setEngine({ status: 'failed', error: errorMessage(error) });
      throw error;
    }
  }
  // Another model holds none of the open run's weights: its own fresh ones.
  if (await loadChosenModel()) {
    engineState.activeRunId = null;
    engineState.freshSeed = store.getState().engine.info?.seed ?? null;
  }
}

/** The id of the model in the engine now ("tiny" until another is loaded). */
export function engineModel(): string {
  return store.getState().engine.info?.model ?? 'tiny';
}
