/**
 * A module worker (where the engine runs) that takes two "visits" through the engine's IndexedDB
 * TuningStore in database `name`: the first resolves the matmul choice with a fake trial and stores it,
 * the second (the in-process cache cleared, a new store and connection) must read it back without a
 * trial. Posts back `{ ok, message, runs, later }`.
 */
import { clearMatmulChoiceCache, resolveMatmulChoice } from '../../../src/gpu/webgpu/matmul-choice-cache.ts';
import type { MatmulChoice } from '../../../src/gpu/webgpu/matmul-variants.ts';
import { indexedDbTuningStore } from '../../../src/workers/engine/tuning-store.ts';

const scope = self as unknown as { postMessage: (message: unknown) => void; onmessage: ((event: MessageEvent<{ name: string }>) => void) | null };

/** The adapter the two visits share (made up: the choice logic does not look at the device). */
const ADAPTER = { vendor: 'test', architecture: 'worker', device: 'idb', description: 'tuning store round trip', isFallbackAdapter: false };
const CHOICE: MatmulChoice = { forward: 'tile8x16', inputGrad: 'tile16x16', weightGrad: 'splitk', source: 'trial' };

async function run(name: string): Promise<void> {
  let runs = 0;
  const trial = async (): Promise<MatmulChoice> => {
    runs++;
    return CHOICE;
  };
  if ('localStorage' in self) throw new Error('this worker has localStorage: the test no longer shows what it should');
  const first = await resolveMatmulChoice(ADAPTER, indexedDbTuningStore(name), trial);
  clearMatmulChoiceCache();
  const later = await resolveMatmulChoice(ADAPTER, indexedDbTuningStore(name), trial);
  scope.postMessage({ ok: true, message: `first ${first.source}, later ${later.source}`, runs, later });
}

scope.onmessage = (event) => {
  run(event.data.name).catch((error: unknown) => scope.postMessage({ ok: false, message: error instanceof Error ? error.message : String(error) }));
};
