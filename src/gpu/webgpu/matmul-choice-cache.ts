/**
 * Remembers the matmul trial's choice per adapter so that it runs once: in the process (later devices
 * on the same adapter) and, given a TuningStore (the engine worker's IndexedDB), across visits. A
 * stored choice counts only for the same adapter (`adapterKey`) and the same kernel set
 * (`matmulChoiceVersion`: the trial's procedure and every matmul kernel's WGSL); anything else the
 * store returns is ignored and the trial runs again, overwriting it. A store that fails or stalls
 * costs only a trial (and one console.info), never the engine.
 */
import { errorMessage } from '../../common/error-message.ts';
import type { AdapterDescription } from './device.ts';
import { WGSL } from './kernels.generated.ts';
import { adapterKey, FORWARD_VARIANTS, INPUT_GRAD_VARIANTS, WEIGHT_GRAD_VARIANTS, type MatmulChoice } from './matmul-variants.ts';
import type { TuningStore } from './tuning-store.ts';

/**
 * Bump when the trial in matmul-tuning.ts changes how it chooses (shapes, rounds, margin, which
 * candidates an adapter skips, the defaults), so that choices stored before are tried again. Edits to
 * the kernels themselves need no bump: their source is part of `matmulChoiceVersion`.
 */
const TRIAL_PROCEDURE_VERSION = 3;

/** How long (ms) the trial waits for the store before it measures anyway (IndexedDB can stall, e.g. while another tab upgrades it). */
export const STORE_TIMEOUT_MS = 1000;

/** The key prefix of the choices in a TuningStore. */
const STORE_PREFIX = 'matmul-choice:';

/** What a TuningStore holds per adapter: the three variants and the kernel-set version they were measured on. */
interface StoredChoice {
  version: string;
  forward: string;
  inputGrad: string;
  weightGrad: string;
}

const IN_PROCESS = new Map<string, MatmulChoice>();
let version: string | undefined;

/** The version of the kernel set a stored choice must match: the trial's procedure version, the variant names and a hash of every matmul kernel's WGSL. */
export function matmulChoiceVersion(): string {
  if (version === undefined) {
    const kernels = Object.entries(WGSL)
      .filter(([name]) => name.startsWith('matmul_'))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const text = [FORWARD_VARIANTS, INPUT_GRAD_VARIANTS, WEIGHT_GRAD_VARIANTS].map((list) => list.join(',')).join(';') + kernels.map(([name, source]) => `\n${name}\n${source}`).join('');
    version = `${TRIAL_PROCEDURE_VERSION}-${fnv1a(text)}`;
  }
  return version;
}

/**
 * Returns the adapter's remembered choice (source 'cached'), or runs `trial` (source 'trial') and
 * remembers its choice in the process and in `store`. Never rejects because of the store.
 */
export async function resolveMatmulChoice(adapter: AdapterDescription, store: TuningStore | undefined, trial: () => Promise<MatmulChoice>): Promise<MatmulChoice> {
  const key = adapterKey(adapter);
  const inProcess = IN_PROCESS.get(key);
  if (inProcess) return { ...inProcess, source: 'cached' };
  if (store) {
    const stored = parseStoredChoice(await storeCall(() => store.get(STORE_PREFIX + key), 'read'));
    if (stored) {
      IN_PROCESS.set(key, stored);
      return { ...stored, source: 'cached' };
    }
  }
  const choice = await trial();
  IN_PROCESS.set(key, choice);
  if (store) {
    const value: StoredChoice = { version: matmulChoiceVersion(), forward: choice.forward, inputGrad: choice.inputGrad, weightGrad: choice.weightGrad };
    await storeCall(() => store.set(STORE_PREFIX + key, value), 'write');
  }
  return choice;
}

/** Forgets the choices remembered in this process (tests: a fresh process, as on a later visit); a store keeps its own. */
export function clearMatmulChoiceCache(): void {
  IN_PROCESS.clear();
}

/** A stored value as a choice of the current kernel set, or null when it is from another version, incomplete or not a choice at all. */
function parseStoredChoice(value: unknown): MatmulChoice | null {
  if (typeof value !== 'object' || value === null) return null;
  const stored = value as Partial<Record<keyof StoredChoice, unknown>>;
  if (stored.version !== matmulChoiceVersion()) return null;
  const { forward, inputGrad, weightGrad } = stored;
  const known = (list: readonly string[], name: unknown): boolean => typeof name === 'string' && list.includes(name);
  if (!known(FORWARD_VARIANTS, forward) || !known(INPUT_GRAD_VARIANTS, inputGrad) || !known(WEIGHT_GRAD_VARIANTS, weightGrad)) return null;
  return { forward, inputGrad, weightGrad, source: 'trial' } as MatmulChoice;
}

/** What `storeCall` races the store against. */
const STALLED = Symbol('stalled');

/** Runs one store call, bounded by STORE_TIMEOUT_MS; a failure or a stall yields undefined and a console.info (it only costs a trial). */
async function storeCall<T>(call: () => Promise<T>, what: 'read' | 'write'): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stalled = new Promise<typeof STALLED>((resolve) => {
    timer = setTimeout(() => resolve(STALLED), STORE_TIMEOUT_MS);
  });
  let reason: string;
  try {
    const result = await Promise.race([Promise.resolve().then(call), stalled]);
    if (result !== STALLED) return result;
    reason = `no answer within ${STORE_TIMEOUT_MS} ms`;
  } catch (error) {
    reason = errorMessage(error);
  } finally {
    clearTimeout(timer);
  }
  const outcome = what === 'read' ? 'could not be read from storage' : 'could not be saved';
  const consequence = what === 'read' ? 'timing the kernels instead' : 'the next visit times the kernels again';
  console.info(`The matmul kernel choice ${outcome} (${reason}); ${consequence}.`);
  return undefined;
}

/** The 32-bit FNV-1a hash of a string's UTF-16 code units, as 8 hex digits. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(8, '0');
}
