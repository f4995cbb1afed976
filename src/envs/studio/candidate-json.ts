/**
 * Lenient reading of a generator's reply as a list of question/answer candidates. Models wrap JSON
 * in prose and code fences, or in an object; this accepts a bare array `[{"question", "answer"}]`,
 * the same array as any field of an object (`{"questions": [...]}`), a single object, each of those
 * inside a ```json fence or surrounded by text. It never throws: a reply that holds no list is
 * reported with its reason, and an item without a question or an answer is reported by its index.
 */
import { parseJsonLeniently } from './lenient-json.ts';

/** One question/answer pair proposed by the generator. */
export interface CandidatePair {
  question: string;
  answer: string;
}

/** An item of the list that is not a usable pair, with why. */
export interface MalformedItem {
  index: number;
  reason: string;
  /** The item's question, when it had one (an item without an answer keeps it). */
  question?: string;
  /** The item as the generator wrote it (JSON text, cut to 200 characters). */
  raw: string;
}

/** What a reply held: usable pairs and malformed items, or (`ok: false`) why nothing could be read. */
export type CandidateParse = { ok: true; pairs: CandidatePair[]; malformed: MalformedItem[] } | { ok: false; reason: string };

const QUESTION_KEYS = ['question', 'q', 'prompt'];
const ANSWER_KEYS = ['answer', 'a', 'reference', 'reference_answer'];

/** Reads a generator reply; see the module comment for what is accepted. */
export function parseCandidateList(reply: string): CandidateParse {
  const text = reply.trim();
  if (text === '') return { ok: false, reason: 'the generator replied with nothing' };
  const value = parseJsonLeniently(text);
  if (value === undefined) return { ok: false, reason: `the reply is not JSON (no array or object parses): "${oneLine(text, 120)}"` };
  const list = findList(value);
  if (!list) return { ok: false, reason: `the JSON holds no list of {"question", "answer"} objects: ${oneLine(JSON.stringify(value), 120)}` };
  const pairs: CandidatePair[] = [];
  const malformed: MalformedItem[] = [];
  list.forEach((item, index) => {
    const pair = readPair(item);
    if (typeof pair === 'string') {
      const question = typeof item === 'object' && item !== null && !Array.isArray(item) ? pick(item as Record<string, unknown>, QUESTION_KEYS) : undefined;
      malformed.push({ index, reason: pair, ...(question !== undefined ? { question } : {}), raw: oneLine(JSON.stringify(item) ?? String(item), 200) });
    } else pairs.push(pair);
  });
  return { ok: true, pairs, malformed };
}

/** The list of items in a parsed value: the value itself, an array field of an object (first one holding objects), or a lone pair object. */
function findList(value: unknown): unknown[] | undefined {
  if (Array.isArray(value)) return value;
  if (typeof value !== 'object' || value === null) return undefined;
  const fields = Object.values(value as Record<string, unknown>);
  const arrays = fields.filter((field): field is unknown[] => Array.isArray(field));
  const ofObjects = arrays.find((array) => array.some((item) => typeof item === 'object' && item !== null));
  if (ofObjects) return ofObjects;
  if (arrays.length > 0) return arrays[0];
  if (QUESTION_KEYS.some((key) => key in value)) return [value];
  return undefined;
}

function readPair(item: unknown): CandidatePair | string {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return 'the item is not an object with "question" and "answer"';
  const record = item as Record<string, unknown>;
  const question = pick(record, QUESTION_KEYS);
  const answer = pick(record, ANSWER_KEYS);
  if (question === undefined) return 'the item has no "question" text';
  if (answer === undefined) return 'the item has no "answer" text';
  return { question, answer };
}

function pick(record: Record<string, unknown>, keys: string[]): string | undefined {
  for (const key of keys) {
    const value = record[key];
    if (typeof value === 'string' && value.trim() !== '') return value.trim();
    if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  }
  return undefined;
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}
