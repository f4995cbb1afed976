/**
 * Remembers the matmul trial's choice per adapter so that it runs once: in the process (later devices
 * on the same adapter) and, given a TuningStore (the engine worker's IndexedDB), across visits. A
 * stored choice counts only for the same adapter (`adapterKey`) and the same kernel set
 * (`matmulChoiceVersion`: the trial's procedure and every matmul kernel's WGSL); anything else the
 * store returns is ignored and the trial runs again, overwriting it. A store that fails or stalls
 * costs only a trial (and one console.info), never the engine: the store logic is tuning-cache.ts's,
 * shared with the other tuning results.
 */
import type { AdapterDescription } from './device.ts';
import { WGSL } from './kernels.generated.ts';
import { adapterKey, FORWARD_VARIANTS, INPUT_GRAD_VARIANTS, WEIGHT_GRAD_VARIANTS, type MatmulChoice } from './matmul-variants.ts';
import { fnv1a, kernelSources, storedOrMeasured, type TuningKind } from './tuning-cache.ts';
import type { TuningStore } from './tuning-store.ts';

/**
 * Bump when the trial in matmul-tuning.ts changes how it chooses (shapes, rounds, margin, which
 * candidates an adapter skips, the defaults), so that choices stored before are tried again. Edits to
 * the kernels themselves need no bump: their source is part of `matmulChoiceVersion`.
 */
const TRIAL_PROCEDURE_VERSION = 3;

const IN_PROCESS = new Map<string, MatmulChoice>();
let version: string | undefined;

/** The version of the kernel set a stored choice must match: the trial's procedure version, the variant names and a hash of every matmul kernel's WGSL. */
export function matmulChoiceVersion(): string {
  if (version === undefined) {
    const text = [FORWARD_VARIANTS, INPUT_GRAD_VARIANTS, WEIGHT_GRAD_VARIANTS].map((list) => list.join(',')).join(';') + kernelSources(WGSL, (name) => name.startsWith('matmul_'));
    version = `${TRIAL_PROCEDURE_VERSION}-${fnv1a(text)}`;
  }
  return version;
}

/** The choice in a TuningStore: `{ version, forward, inputGrad, weightGrad }` under 'matmul-choice:' + the adapter key. */
const MATMUL_CHOICE: TuningKind<MatmulChoice> = {
  prefix: 'matmul-choice:',
  version: matmulChoiceVersion,
  parse: ({ forward, inputGrad, weightGrad }) => {
    const known = (list: readonly string[], name: unknown): boolean => typeof name === 'string' && list.includes(name);
    if (!known(FORWARD_VARIANTS, forward) || !known(INPUT_GRAD_VARIANTS, inputGrad) || !known(WEIGHT_GRAD_VARIANTS, weightGrad)) return null;
    return { forward, inputGrad, weightGrad, source: 'trial' } as MatmulChoice;
  },
  fields: ({ forward, inputGrad, weightGrad }) => ({ forward, inputGrad, weightGrad }),
  subject: 'The matmul kernel choice',
  measuring: 'timing the kernels',
};

/**
 * Returns the adapter's remembered choice (source 'cached'), or runs `trial` (source 'trial') and
 * remembers its choice in the process and in `store`. Never rejects because of the store.
 */
export async function resolveMatmulChoice(adapter: AdapterDescription, store: TuningStore | undefined, trial: () => Promise<MatmulChoice>): Promise<MatmulChoice> {
  const key = adapterKey(adapter);
  const inProcess = IN_PROCESS.get(key);
  if (inProcess) return { ...inProcess, source: 'cached' };
  const { value, stored } = await storedOrMeasured(store, MATMUL_CHOICE, key, trial);
  IN_PROCESS.set(key, value);
  return stored ? { ...value, source: 'cached' } : value;
}

/** Forgets the choices remembered in this process (tests: a fresh process, as on a later visit); a store keeps its own. */
export function clearMatmulChoiceCache(): void {
  IN_PROCESS.clear();
}
