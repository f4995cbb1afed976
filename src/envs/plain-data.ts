/**
 * Turns whatever an environment left in a rollout (its `state` may hold Maps, Sets, BigInts,
 * class instances or functions) into JSON-safe plain data, so records cross to the app and export
 * as JSONL unchanged. Not a general serialiser: it keeps what a person reading a rollout needs.
 */

const MAX_DEPTH = 32;

/** Returns a JSON-safe copy of `value`: BigInt → string, Map → object, Set → array, functions dropped, cycles marked. */
export function toPlainData(value: unknown): unknown {
  const ancestors: object[] = [];
  const convert = (item: unknown): unknown => {
    if (item === null || typeof item === 'string' || typeof item === 'boolean') return item;
    if (typeof item === 'number') return Number.isFinite(item) ? item : String(item);
    if (typeof item === 'bigint') return item.toString();
    if (typeof item !== 'object') return undefined;
    if (ancestors.includes(item)) return '[circular]';
    if (ancestors.length >= MAX_DEPTH) return '[too deep]';
    ancestors.push(item);
    try {
      if (item instanceof Error) return { name: item.name, message: item.message };
      if (item instanceof Map) return Object.fromEntries([...item].map(([key, entry]) => [String(key), convert(entry)]));
      if (item instanceof Set || Array.isArray(item)) return [...item].map((entry) => convert(entry) ?? null);
      const plain: Record<string, unknown> = {};
      for (const [key, entry] of Object.entries(item)) {
        const converted = convert(entry);
        if (converted !== undefined) plain[key] = converted;
      }
      return plain;
    } finally {
      ancestors.pop();
    }
  };
  return convert(value) ?? null;
}
