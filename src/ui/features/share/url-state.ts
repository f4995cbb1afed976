/**
 * Share links: the environment source, the evaluation and training settings and the seed, in the URL hash, as a
 * typed table of fields and codecs (after tensorflow/playground `state.ts`). The source is
 * compressed with lz-string into URL-safe text, like the TypeScript playground. API keys, results
 * and metrics never go in a link. A malformed or oversized link decodes to a `ShareLinkError` that
 * says what is wrong, and nothing is loaded.
 */
import { compressToEncodedURIComponent } from 'lz-string';
import { decompressBounded } from './bounded-lz.ts';
import { errorMessage } from '../../../common/error-message.ts';

/** Everything a link carries. */
export interface SharedState {
  /** The environment file's TypeScript source. */
  source: string;
  /** The environment's display name. */
  name: string;
  /** The built-in it started from, for its expert policy. */
  builtin?: string;
  /** Arguments passed to `loadEnvironment(args)`. */
  args: Record<string, unknown>;
  policy: 'expert' | 'endpoint' | 'in-tab' | 'webllm';
  /** The WebLLM prebuilt model id, for the webllm policy or teacher (absent in older links). */
  webllmModel?: string;
  /** Who makes the warm-up's demonstrations (absent in older links: the built-in's expert). */
  teacher?: 'expert' | 'endpoint' | 'webllm';
  /** The in-tab model: a shipped model's id ("nano", "nano-2m"), "tiny", a real preset's id, or "local" (absent in older links, which mean tiny). */
  inTabModel?: string;
  /** Model name sent to the endpoint (never the key). */
  model: string;
  baseURL: string;
  /** The judge lent to the environment (absent in older links: the recipient's own choice stays). */
  judgeKind?: 'heuristic' | 'endpoint' | 'webllm' | 'in-tab';
  /** The judge endpoint's base URL and model name (never its key); absent in older links. */
  judgeBaseURL?: string;
  judgeModel?: string;
  /** The tool simulator lent to an environment with simulated tools (absent in older links: the recipient's own choice stays). */
  simulatorKind?: 'heuristic' | 'judge' | 'policy' | 'endpoint';
  /** The simulator endpoint's base URL and model name (never its key); absent in older links. */
  simulatorBaseURL?: string;
  simulatorModel?: string;
  /** The evaluation settings, as one object (share links and imported setups copy it whole). */
  evaluation: SharedEvaluation;
  /** The run panel's mode (absent in links made before training existed). */
  mode?: 'evaluate' | 'warmup' | 'train';
  /** Warm-up and GRPO settings by name (numbers, booleans and short choices; unknown names are ignored when loading). */
  training?: Record<string, number | string | boolean | null>;
}

/** The run panel's evaluation settings as a setup carries them (the environment's arguments travel beside them, as `args`). */
export interface SharedEvaluation {
  numTasks: number;
  rolloutsPerTask: number;
  concurrency: number;
  maxTokens: number;
  temperature: number;
  seed: number;
  /** Milliseconds environment code may run without returning before the sandbox is stopped. */
  timeLimitMs: number;
}

/** The names of the evaluation settings, in the order a link spells them. */
const EVALUATION_NAMES = ['numTasks', 'rolloutsPerTask', 'concurrency', 'maxTokens', 'temperature', 'seed', 'timeLimitMs'] as const satisfies readonly (keyof SharedEvaluation)[];

/**
 * A setup as the link spells it, and as setups were shaped before the evaluation settings were
 * nested: every field at the top level. The hash keeps this flat form, so links made before the
 * nesting open unchanged.
 */
export type FlatSharedState = Omit<SharedState, 'evaluation'> & SharedEvaluation;

/** The flat form of a setup (what the link's fields hold). */
export function flattenSharedState(state: SharedState): FlatSharedState {
  const { evaluation, ...rest } = state;
  return { ...rest, ...evaluation };
}

/** A setup in the current shape, from either shape: the nested one as it is, the older flat one with its evaluation settings gathered into `evaluation`. */
export function migrateSharedState(setup: SharedState | FlatSharedState): SharedState {
  if ('evaluation' in setup && typeof setup.evaluation === 'object' && setup.evaluation !== null) return setup as SharedState;
  const flat = { ...(setup as FlatSharedState) };
  const evaluation = Object.fromEntries(EVALUATION_NAMES.map((name) => [name, flat[name]])) as unknown as SharedEvaluation;
  for (const name of EVALUATION_NAMES) delete (flat as Partial<FlatSharedState>)[name];
  return { ...(flat as Omit<FlatSharedState, keyof SharedEvaluation>), evaluation };
}

/** Why a link could not be opened. */
export class ShareLinkError extends Error {
  override readonly name = 'ShareLinkError';
}

/** The link format version; a link of another version is refused with a message. */
const SHARE_VERSION = 1;
/** Links longer than this are refused before decoding. */
export const MAX_HASH_LENGTH = 200_000;
/** Decoded source longer than this is refused, while it is decompressed. */
const MAX_SOURCE_LENGTH = 500_000;
/** A decoded settings table longer than this is refused, while it is decompressed. */
const MAX_TABLE_LENGTH = 100_000;

interface Codec<T> {
  encode(value: T): string;
  /** Throws a plain Error with what is wrong; the caller adds the field name. */
  decode(text: string): T;
}

const integer = (min: number, max: number): Codec<number> => ({
  encode: (value) => String(value),
  decode: (text) => {
    const value = Number(text);
    if (!/^-?\d+$/.test(text) || value < min || value > max) throw new Error(`expected a whole number from ${min} to ${max}, got "${text.slice(0, 20)}"`);
    return value;
  },
});

const decimal = (min: number, max: number): Codec<number> => ({
  encode: (value) => String(value),
  decode: (text) => {
    const value = Number(text);
    if (text === '' || !Number.isFinite(value) || value < min || value > max) throw new Error(`expected a number from ${min} to ${max}, got "${text.slice(0, 20)}"`);
    return value;
  },
});

const plainText = (maxLength: number): Codec<string> => ({
  encode: (value) => value,
  decode: (text) => {
    if (text.length > maxLength) throw new Error(`longer than ${maxLength} characters`);
    return text;
  },
});

const oneOf = <T extends string>(values: readonly T[]): Codec<T> => ({
  encode: (value) => value,
  decode: (text) => {
    if (!(values as readonly string[]).includes(text)) throw new Error(`expected one of ${values.join(', ')}, got "${text.slice(0, 20)}"`);
    return text as T;
  },
});

/** A model id: lower-case letters, digits, dots and dashes (the presets' ids, "tiny", "local"). */
const modelId: Codec<string> = {
  encode: (value) => value,
  decode: (text) => {
    if (!/^[a-z0-9][a-z0-9.-]{0,63}$/.test(text)) throw new Error(`expected a model id such as "tiny" or "smollm2-135m-instruct", got "${text.slice(0, 20)}"`);
    return text;
  },
};

/** A table of settings: finite numbers, booleans, short strings (a choice such as a loss type) and null (a knob left to the trainer). */
const settingsTable: Codec<Record<string, number | string | boolean | null>> = {
  encode: (value) => compressToEncodedURIComponent(JSON.stringify(value)),
  decode: (text) => {
    const json = decompressBounded(text, MAX_TABLE_LENGTH);
    if (!json) throw new Error('the compressed text is damaged');
    const value: unknown = JSON.parse(json);
    const isSetting = (item: unknown) => item === null || (typeof item === 'number' && Number.isFinite(item)) || typeof item === 'boolean' || (typeof item === 'string' && item.length <= 40);
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.values(value).every(isSetting)) {
      throw new Error('expected a JSON object of numbers, booleans and short words');
    }
    return value as Record<string, number | string | boolean | null>;
  },
};

const compressedText: Codec<string> = {
  encode: (value) => compressToEncodedURIComponent(value),
  decode: (text) => {
    const value = decompressBounded(text, MAX_SOURCE_LENGTH);
    if (!value) throw new Error('the compressed text is damaged (was the link cut short?)');
    return value;
  },
};

const jsonObject: Codec<Record<string, unknown>> = {
  encode: (value) => compressToEncodedURIComponent(JSON.stringify(value)),
  decode: (text) => {
    const json = decompressBounded(text, MAX_SOURCE_LENGTH);
    if (!json) throw new Error('the compressed text is damaged');
    const value: unknown = JSON.parse(json);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('expected a JSON object');
    return value as Record<string, unknown>;
  },
};

interface Field<K extends keyof FlatSharedState> {
  /** The key in the hash (short, stable: changing one breaks old links). */
  key: string;
  codec: Codec<NonNullable<FlatSharedState[K]>>;
  optional?: boolean;
}

/** The table: each field of a link (the evaluation settings spelled flat), its key in the hash and its codec. */
export const SHARE_FIELDS: { [K in keyof FlatSharedState]-?: Field<K> } = {
  name: { key: 'name', codec: plainText(200) },
  builtin: { key: 'builtin', codec: plainText(100), optional: true },
  policy: { key: 'policy', codec: oneOf(['expert', 'endpoint', 'in-tab', 'webllm'] as const) },
  webllmModel: { key: 'wllm', codec: plainText(200), optional: true },
  teacher: { key: 'teacher', codec: oneOf(['expert', 'endpoint', 'webllm'] as const), optional: true },
  model: { key: 'model', codec: plainText(200) },
  baseURL: { key: 'url', codec: plainText(2000) },
  numTasks: { key: 'tasks', codec: integer(1, 100_000) },
  rolloutsPerTask: { key: 'k', codec: integer(1, 256) },
  concurrency: { key: 'conc', codec: integer(1, 64) },
  maxTokens: { key: 'maxtok', codec: integer(1, 131_072) },
  temperature: { key: 'temp', codec: decimal(0, 2) },
  seed: { key: 'seed', codec: integer(0, 2 ** 31 - 1) },
  timeLimitMs: { key: 'limit', codec: integer(100, 600_000) },
  mode: { key: 'mode', codec: oneOf(['evaluate', 'warmup', 'train'] as const), optional: true },
  training: { key: 'train', codec: settingsTable, optional: true },
  inTabModel: { key: 'itm', codec: modelId, optional: true },
  judgeKind: { key: 'judge', codec: oneOf(['heuristic', 'endpoint', 'webllm', 'in-tab'] as const), optional: true },
  judgeBaseURL: { key: 'jurl', codec: plainText(2000), optional: true },
  judgeModel: { key: 'jmodel', codec: plainText(200), optional: true },
  simulatorKind: { key: 'sim', codec: oneOf(['heuristic', 'judge', 'policy', 'endpoint'] as const), optional: true },
  simulatorBaseURL: { key: 'surl', codec: plainText(2000), optional: true },
  simulatorModel: { key: 'smodel', codec: plainText(200), optional: true },
  args: { key: 'args', codec: jsonObject },
  source: { key: 'code', codec: compressedText },
};

/** Encodes the state as a hash string (without '#'); the source goes last, since it is the longest. */
export function encodeShareHash(state: SharedState): string {
  const parts = [`v=${SHARE_VERSION}`];
  const flat = flattenSharedState(state);
  for (const [name, field] of Object.entries(SHARE_FIELDS) as [keyof FlatSharedState, Field<keyof FlatSharedState>][]) {
    const value = flat[name];
    if (value === undefined) continue;
    parts.push(`${field.key}=${encodeURIComponent((field.codec as Codec<typeof value>).encode(value))}`);
  }
  return parts.join('&');
}

/** True when a hash looks like a share link (it may still be malformed). */
export function isShareHash(hash: string): boolean {
  return /(^|[#&])v=/.test(hash) && /(^|[#&])code=/.test(hash);
}

/** Decodes a hash (with or without '#'); throws `ShareLinkError` naming the first bad field. */
export function decodeShareHash(hash: string): SharedState {
  const text = hash.startsWith('#') ? hash.slice(1) : hash;
  if (text.length > MAX_HASH_LENGTH) throw new ShareLinkError(`This link is too long (${text.length} characters; at most ${MAX_HASH_LENGTH}). Nothing was loaded.`);
  const params = new Map<string, string>();
  for (const part of text.split('&')) {
    if (!part) continue;
    const equals = part.indexOf('=');
    if (equals < 0) throw new ShareLinkError(`This link is malformed ("${part.slice(0, 20)}" has no value). Nothing was loaded.`);
    try {
      params.set(part.slice(0, equals), decodeURIComponent(part.slice(equals + 1)));
    } catch {
      throw new ShareLinkError(`This link is malformed (bad escaping in "${part.slice(0, equals)}"). Nothing was loaded.`);
    }
  }
  const version = params.get('v');
  if (version !== String(SHARE_VERSION)) throw new ShareLinkError(`This link has format version ${version ?? '(none)'}; this TabRL reads version ${SHARE_VERSION}. Nothing was loaded.`);
  const state: Partial<Record<keyof FlatSharedState, unknown>> = {};
  for (const [name, field] of Object.entries(SHARE_FIELDS) as [keyof FlatSharedState, Field<keyof FlatSharedState>][]) {
    const raw = params.get(field.key);
    if (raw === undefined) {
      if (field.optional) continue;
      throw new ShareLinkError(`This link is missing "${field.key}". Nothing was loaded.`);
    }
    try {
      state[name] = field.codec.decode(raw);
    } catch (error) {
      throw new ShareLinkError(`This link's "${field.key}" is invalid: ${errorMessage(error)}. Nothing was loaded.`);
    }
  }
  return migrateSharedState(state as FlatSharedState);
}
