/**
 * Retrieval over recorded tool calls: the records of the same tool whose arguments are closest to a
 * call's. Closeness is the mean, over the union of argument names, of a per-argument score: 1 for
 * equal values (compared as canonical JSON), the word overlap (Jaccard) of two strings, 0 otherwise
 * or when one side lacks the argument. Pure functions over plain data; no model is called here.
 */
import type { ToolRecord } from './tool-records.ts';

/** A record and how close its arguments are to the call's (0–1, 1 for the same arguments). */
export interface ScoredRecord {
  record: ToolRecord;
  similarity: number;
}

/** JSON text of a value with object keys sorted, so equal values give equal text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
  );
}

/** How close two argument objects are, 0–1 (see the module comment); two empty objects score 1. */
export function argumentSimilarity(a: Record<string, unknown>, b: Record<string, unknown>): number {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  if (keys.size === 0) return 1;
  let sum = 0;
  for (const key of keys) {
    if (!(key in a) || !(key in b)) continue;
    const x = a[key];
    const y = b[key];
    if (canonicalJson(x) === canonicalJson(y)) sum += 1;
    else if (typeof x === 'string' && typeof y === 'string') sum += wordOverlap(x, y);
  }
  return sum / keys.size;
}

function words(text: string): Set<string> {
  return new Set(
    text
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .filter((word) => word !== ''),
  );
}

function wordOverlap(x: string, y: string): number {
  const a = words(x);
  const b = words(y);
  if (a.size === 0 && b.size === 0) return 0;
  let shared = 0;
  for (const word of a) if (b.has(word)) shared += 1;
  return shared / (a.size + b.size - shared);
}

/** The `k` records of `tool` closest to `args`, closest first (ties keep the records' order). */
export function nearestRecords(records: readonly ToolRecord[], tool: string, args: Record<string, unknown>, k: number): ScoredRecord[] {
  return records
    .filter((record) => record.tool === tool)
    .map((record, index) => ({ record, similarity: argumentSimilarity(args, record.arguments), index }))
    .sort((x, y) => y.similarity - x.similarity || x.index - y.index)
    .slice(0, k)
    .map(({ record, similarity }) => ({ record, similarity }));
}
