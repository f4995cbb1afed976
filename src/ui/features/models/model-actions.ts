/**
 * Which model the in-tab engine runs: choosing it (tiny, a model the app ships such as nano or
 * nano-2m (the list in src/models/shipped-models.ts), a real preset, or a local folder; the
 * choice is remembered in localStorage), loading it into the engine with download progress and
 * cancel, and the browser cache of real presets (which are complete, removing one). The model
 * picker and ensureEngine (training-actions.ts) call these; they write only the policy slice and
 * the engine's info.
 */
import { browserModelStorage, deleteCachedModel, isModelCached, presetDownloadSpec } from '../../../models/cache.ts';
import { findRealPreset, REAL_MODEL_PRESETS } from '../../../models/catalogue.ts';
import { findShippedModel, shippedModelIds, shippedModelPath } from '../../../models/shipped-models.ts';
import { loadEngineModel, startEngine, type EngineModelSpec } from '../../../workers/engine-bridge.ts';
import { usePlayground } from '../../store/index.ts';
import { errorMessage } from '../../../common/error-message.ts';
import { actionState } from '../../store/action-state.ts';

const store = usePlayground;
const IN_TAB_MODEL_STORAGE = 'tabrl.inTabModel';

/** The picks and loads of this page (see action-state.ts). */
const picks = actionState(() => ({
  /** The files of the last "Local folder…" pick (kept for this page only: a reload forgets them). */
  pickedFiles: null as File[] | null,
  /** Bumped by each pick, so picking another folder reloads even though the model stays "local". */
  pickGeneration: 0,
  /** The pick whose files the engine holds. */
  loadedPickGeneration: -1,
  /** The load in progress, shared by everyone who asks for the same model meanwhile. */
  inFlight: null as { target: string; generation: number; controller: AbortController; promise: Promise<boolean> } | null,
  /** Cancels the load in progress. */
  loadController: null as AbortController | null,
}));

/** Whether `id` names a model the in-tab engine can load by name: tiny, a shipped model (nano, nano-wordle, nano-tools, nano-2m) or a real preset ("local" needs picked files, so it is not one). */
export function isInTabModelId(id: string): boolean {
  return id === 'tiny' || findShippedModel(id) !== undefined || findRealPreset(id) !== undefined;
}

/** Restores the remembered in-tab model ("local" comes back as tiny: picked files do not survive a reload). */
export function restoreInTabModel(): void {
  const saved = localStorage.getItem(IN_TAB_MODEL_STORAGE);
  if (saved && isInTabModelId(saved)) store.getState().setInTabModel(saved);
}

/** Chooses the in-tab model ("tiny", a shipped model's id such as "nano-2m", or a preset id) and remembers it; the next ensureEngine loads it. */
export function chooseInTabModel(id: string): void {
  store.getState().setInTabModel(id);
  store.getState().setModelLoad({ status: 'idle', error: null });
  localStorage.setItem(IN_TAB_MODEL_STORAGE, id);
}

/** Chooses files the person picked (a model folder) as the in-tab model; the next ensureEngine loads them. */
export function chooseLocalModel(files: File[]): void {
  picks.pickedFiles = files;
  picks.pickGeneration++;
  store.getState().setInTabModel('local');
  store.getState().setModelLoad({ status: 'idle', error: null });
}

/** Cancels a download in progress; the engine goes back to the model it held before (tiny for a real one) and so does the choice. */
export function cancelModelLoad(): void {
  picks.loadController?.abort();
}

function specFor(target: string, seed: number): EngineModelSpec {
  if (target === 'tiny') return { kind: 'tiny', seed };
  if (findShippedModel(target)) return { kind: 'shipped', id: target, url: `${import.meta.env.BASE_URL}${shippedModelPath(target)}`, seed };
  if (target === 'local') {
    if (!picks.pickedFiles) throw new Error('Choose the model folder again ("Local folder…"): picked files are not kept across page loads.');
    return { kind: 'local', files: picks.pickedFiles, seed };
  }
  if (!findRealPreset(target)) throw new Error(`Unknown in-tab model "${target}"; choose tiny, ${shippedModelIds().join(', ')} or one of ${REAL_MODEL_PRESETS.map((preset) => preset.id).join(', ')}.`);
  return { kind: 'preset', id: target, seed };
}

/**
 * Loads the chosen model into the started engine when it holds another one; returns whether the
 * model changed (so the caller forgets which run's weights the engine held). A failure or cancel
 * leaves the model loaded before in the engine when it needs no download (tiny or a shipped model), tiny
 * otherwise, selects that model in the picker, shows the message there, and throws it.
 */
export async function loadChosenModel(): Promise<boolean> {
  const { inTabModel: target, engine, settings } = store.getState();
  const generation = target === 'local' ? picks.pickGeneration : 0;
  if (engine.info?.model === target && (target !== 'local' || picks.loadedPickGeneration === generation)) return false;
  if (picks.inFlight && picks.inFlight.target === target && picks.inFlight.generation === generation) return picks.inFlight.promise;
  picks.loadController?.abort();
  const controller = new AbortController();
  picks.loadController = controller;
  const promise = (async () => {
    store.getState().setModelLoad({ status: 'loading', target, loaded: 0, total: 0, error: null });
    try {
      const info = await loadEngineModel(specFor(target, settings.seed), {
        signal: controller.signal,
        onProgress: (progress) => store.getState().setModelLoad({ loaded: progress.loaded, total: progress.total }),
      });
      picks.loadedPickGeneration = generation;
      store.getState().setEngine({ status: 'ready', info, error: null });
      store.getState().setModelLoad({ status: 'idle', target: null });
      return true;
    } catch (error) {
      const info = await startEngine(settings.seed).catch(() => null);
      if (info) store.getState().setEngine({ status: 'ready', info, error: null });
      // The picker shows the model the engine holds now, not the one that failed (which a later action would otherwise try again).
      if (store.getState().inTabModel === target) chooseInTabModel(info?.model ?? 'tiny');
      if (controller.signal.aborted) {
        store.getState().setModelLoad({ status: 'idle', target: null });
        throw new Error(`Loading the model was cancelled; the in-tab model is ${info?.model ?? 'tiny'}.`);
      }
      store.getState().setModelLoad({ status: 'failed', target: null, error: errorMessage(error) });
      throw error;
    } finally {
      if (picks.inFlight?.controller === controller) picks.inFlight = null;
      if (picks.loadController === controller) picks.loadController = null;
      void refreshCachedModels();
    }
  })();
  picks.inFlight = { target, generation, controller, promise };
  return promise;
}

/** Re-reads which real presets are completely cached (for the picker's "cached · 272 MB"). */
export async function refreshCachedModels(): Promise<void> {
  try {
    const storage = browserModelStorage();
    const entries = await Promise.all(REAL_MODEL_PRESETS.map(async (preset) => [preset.id, await isModelCached(presetDownloadSpec(preset), storage)] as const));
    store.getState().setCachedModels(Object.fromEntries(entries));
  } catch {
    store.getState().setCachedModels({}); // no Cache Storage here: nothing is cached
  }
}

/** Removes a preset's files from the browser cache (a loaded model stays loaded until replaced). */
export async function removeCachedModel(id: string): Promise<void> {
  const preset = findRealPreset(id);
  if (!preset) return;
  await deleteCachedModel(presetDownloadSpec(preset), browserModelStorage());
  await refreshCachedModels();
}
