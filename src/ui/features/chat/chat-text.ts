/**
 * The Chat tab's note on what its "base" column is, as a pure function of the engine's model: a LoRA
 * model's own weights with the adapters off, or the fully fine-tuned model's weights where the run
 * started. No React here.
 */
import type { EngineInfo } from '../../../workers/engine-bridge.ts';

/** The sentence that says what the base column answers with, for the model the engine holds (seed: where the run started). */
export function chatBaseNote(info: Pick<EngineInfo, 'model' | 'modelName' | 'loraRank' | 'parameters'> | null, seed: number): string {
  const name = info?.modelName ?? info?.model ?? 'the in-tab model';
  if (info && typeof info.loraRank === 'number') return `Base: ${name} as downloaded, the same weights with the LoRA adapters (rank ${info.loraRank}) switched off.`;
  if (!info || info.model === 'tiny')
    return `Base: the tiny model as initialised from seed ${seed}, where the run started (it is fully fine-tuned, so it has no adapters to switch off; the engine keeps a copy of its ~100k initial weights).`;
  return `Base: ${name} as it was where the run started (it is fully fine-tuned, so it has no adapters to switch off; the engine keeps a copy of its ${info.parameters.toLocaleString('en-US')} initial weights).`;
}
