/**
 * What every tuning result kept in a TuningStore shares (the matmul choice, the decode path): an
 * entry is `{ version, ...fields }` under `prefix + key`, read back only when its version is the
 * current one and its fields parse; any other value is ignored, measured again and overwritten. Each
 * store call is bounded by STORE_TIMEOUT_MS, and a call that throws, rejects or stalls costs only a
 * measurement (and one console.info), never the caller.
 */
import { errorMessage } from '../../common/error-message.ts';
import type { TuningStore } from './tuning-store.ts';

/** How long (ms) a store call may take before the caller measures anyway (IndexedDB can stall, e.g. while another tab upgrades it). */
export const STORE_TIMEOUT_MS = 1000;

/** One kind of tuning result in a TuningStore: where its entries live, which version they must carry, how to (de)serialise it, how to name it. */
export interface TuningKind<T> {
  /** The prefix of its keys in the store, e.g. 'matmul-choice:'. */
  prefix: string;
  /** The version a stored entry must carry to count (a procedure number and a hash of the kernels involved). */
  version(): string;
  /** The stored fields (besides `version`) as a result, or null when they are not a valid one. */
  parse(fields: Readonly<Record<string, unknown>>): T | null;
  /** The fields to store for a result: strings and numbers only (structured-cloneable). */
  fields(value: T): Record<string, string | number>;
  /** What console messages call it, e.g. 'The matmul kernel choice'. */
  subject: string;
  /** What measuring it is called in console messages, e.g. 'timing the kernels'. */
  measuring: string;
}

/**
 * Returns the result stored under `key` for `kind` (stored: true), or runs `measure` and stores its
 * result (stored: false). Without a store it just measures. Never rejects because of the store; a
 * rejection of `measure` passes through and stores nothing.
 */
export async function storedOrMeasured<T>(store: TuningStore | undefined, kind: TuningKind<T>, key: string, measure: () => Promise<T>): Promise<{ value: T; stored: boolean }> {
  if (store) {
    const stored = parseEntry(kind, await storeCall(kind, () => store.get(kind.prefix + key), 'read'));
    if (stored !== null) return { value: stored, stored: true };
  }
  const value = await measure();
  if (store) await storeCall(kind, () => store.set(kind.prefix + key, { version: kind.version(), ...kind.fields(value) }), 'write');
  return { value, stored: false };
}

/** A stored value as a result of the current version, or null when it is of another version, not an object or its fields do not parse. */
function parseEntry<T>(kind: TuningKind<T>, value: unknown): T | null {
  if (typeof value !== 'object' || value === null) return null;
  const entry = value as Record<string, unknown>;
  if (entry.version !== kind.version()) return null;
  return kind.parse(entry);
}

/** What `storeCall` races the store against. */
const STALLED = Symbol('stalled');

/** Runs one store call, bounded by STORE_TIMEOUT_MS; a failure or a stall yields undefined and a console.info (it only costs a measurement). */
async function storeCall<R>(kind: TuningKind<unknown>, call: () => Promise<R>, what: 'read' | 'write'): Promise<R | undefined> {
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
  const consequence = what === 'read' ? `${kind.measuring} instead` : `the next visit repeats ${kind.measuring}`;
  console.info(`${kind.subject} ${outcome} (${reason}); ${consequence}.`);
  return undefined;
}

/** The 32-bit FNV-1a hash of a string's UTF-16 code units, as 8 hex digits (for versions that change with a kernel's source). */
export function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(8, '0');
}

/** The WGSL of the kernels `include` picks, sorted by name, each as "\nname\nsource" (the text a version hashes, so that editing a kernel changes it). */
export function kernelSources(kernels: Readonly<Record<string, string>>, include: (name: string) => boolean): string {
  return Object.entries(kernels)
    .filter(([name]) => include(name))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, source]) => `\n${name}\n${source}`)
    .join('');
}
