/**
 * The model catalogue and the browser's model cache as the app uses them: the real presets (names,
 * sizes, repositories), and whether a preset's files are cached, removing them, and byte sizes in
 * words. The app reaches the engine's model code only through src/workers (the lint keeps src/ui
 * off src/gpu); this module re-exports, it holds no logic of its own.
 */
export { DEFAULT_REAL_PRESET_ID, findRealPreset, REAL_MODEL_PRESETS, type RealModelPreset } from '../gpu/inference/presets.ts';
export { browserModelStorage, deleteCachedModel, formatBytes, isModelCached, presetDownloadSpec } from '../gpu/io/model-download.ts';
export type { NamedTensors } from '../gpu/model/backend.ts';
