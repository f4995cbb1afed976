/** The share-link codec: every field round-trips, and bad links are refused with a message that says why. */
import { compressToEncodedURIComponent } from 'lz-string';
import { describe, expect, test } from 'vitest';
import {
  decodeShareHash,
  encodeShareHash,
  flattenSharedState,
  isShareHash,
  MAX_HASH_LENGTH,
  migrateSharedState,
  SHARE_FIELDS,
  ShareLinkError,
  type FlatSharedState,
  type SharedState,
} from '../../../src/ui/features/share/url-state.ts';

const FULL: SharedState = {
  source: "import { Environment } from 'tabrl';\n// ünïcødé, & = # % ?\nexport default function loadEnvironment() { return 1; }\n",
  name: 'My env & co = "quoted" #1',
  builtin: 'reverse-text',
  args: { compact: true, minLength: 4, nested: { list: [1, 'two', null] } },
  policy: 'in-tab',
  model: 'gpt-4o-mini',
  baseURL: 'https://example.com/v1?x=1&y=2',
  evaluation: { numTasks: 400, rolloutsPerTask: 8, concurrency: 16, maxTokens: 12, temperature: 0.7, seed: 2 ** 31 - 1, timeLimitMs: 5000 },
  mode: 'train',
  training: { grpoSteps: 200, grpoLr: 5e-4, temperature: 1, groupSize: 4 },
  webllmModel: 'Qwen2.5-0.5B-Instruct-q4f16_1-MLC',
  teacher: 'webllm',
  inTabModel: 'qwen2.5-0.5b-instruct',
  judgeKind: 'endpoint',
  judgeBaseURL: 'https://judge.example.org/v1',
  judgeModel: 'judge-7b',
  simulatorKind: 'endpoint',
  simulatorBaseURL: 'https://sim.example.org/v1',
  simulatorModel: 'sim-3b',
};

/** A copy of the state without the given fields. */
function without(state: SharedState, ...names: (keyof SharedState)[]): SharedState {
  const copy: Partial<SharedState> = { ...state };
  for (const name of names) delete copy[name];
  return copy as SharedState;
}

function errorOf(hash: string): string {
  try {
    decodeShareHash(hash);
  } catch (error) {
    expect(error).toBeInstanceOf(ShareLinkError);
    return (error as Error).message;
  }
  throw new Error(`decoded without an error: ${hash.slice(0, 80)}`);
}

describe('share links', () => {
  test('every field round-trips, with or without the leading #', () => {
    const hash = encodeShareHash(FULL);
    expect(decodeShareHash(hash)).toEqual(FULL);
    expect(decodeShareHash(`#${hash}`)).toEqual(FULL);
    expect(isShareHash(`#${hash}`)).toBe(true);
    // The table covers every field of the state (the evaluation settings spelled flat), so none is silently dropped.
    expect(Object.keys(SHARE_FIELDS).sort()).toEqual(Object.keys(flattenSharedState(FULL)).sort());
  });

  test('the version comes first and the source last', () => {
    const hash = encodeShareHash(FULL);
    expect(hash.startsWith('v=1&')).toBe(true);
    expect(hash.split('&').at(-1)!.startsWith('code=')).toBe(true);
  });

  test('older links without the optional fields still open', () => {
    const old = without(FULL, 'mode', 'training', 'builtin', 'webllmModel', 'teacher', 'inTabModel', 'judgeKind', 'judgeBaseURL', 'judgeModel', 'simulatorKind', 'simulatorBaseURL', 'simulatorModel');
    const hash = encodeShareHash(old);
    expect(hash).not.toMatch(/(^|&)(mode|train|builtin|wllm|teacher|itm|judge|jurl|jmodel|sim|surl|smodel)=/);
    const decoded = decodeShareHash(hash);
    expect(decoded).toEqual(old);
    expect(decoded.mode).toBeUndefined();
    expect(decoded.training).toBeUndefined();
    expect(decoded.judgeKind).toBeUndefined();
    expect(decoded.simulatorKind).toBeUndefined();
  });

  test('a judge kind the app does not know is refused, naming the field', () => {
    expect(errorOf(encodeShareHash(FULL).replace('judge=endpoint', 'judge=oracle'))).toMatch(/judge/);
  });

  test('the tool simulator travels as its kind, URL and model, never a key; an unknown kind is refused, naming the field', () => {
    const hash = encodeShareHash(FULL);
    expect(hash).toContain('sim=endpoint');
    expect(hash).toContain(`surl=${encodeURIComponent('https://sim.example.org/v1')}`);
    expect(hash).toContain('smodel=sim-3b');
    expect(Object.keys(SHARE_FIELDS).filter((name) => /key/i.test(name))).toEqual([]);
    expect(errorOf(hash.replace('sim=endpoint', 'sim=oracle'))).toMatch(/"sim" is invalid/);
  });

  test('a link made before the evaluation settings were nested opens into the nested setup', () => {
    // Made by the encoder of that time (flat fields); the hash keys did not change.
    const old = 'v=1&name=shared&builtin=reverse-text&policy=expert&model=default&url=http%3A%2F%2Flocalhost%3A8000%2Fv1&tasks=3&k=2&conc=1&maxtok=64&temp=0.5&seed=7&limit=5000&args=N4XyA&code=KYDwDg9gTgLgBAE2AMwIYFcA29noHYDGMAlhHnJhKggKJ4BuxUZAtsHjABQCUcA3gF8gA';
    const decoded = decodeShareHash(old);
    expect(decoded.evaluation).toEqual({ numTasks: 3, rolloutsPerTask: 2, concurrency: 1, maxTokens: 64, temperature: 0.5, seed: 7, timeLimitMs: 5000 });
    expect(decoded).not.toHaveProperty('numTasks');
    expect(decoded.args).toEqual({});
    expect(decoded.source).toBe('export default function loadEnvironment() {}');
    expect(encodeShareHash(decoded)).toBe(old);
  });

  test('a setup object of the old flat shape migrates to the nested one; a nested one is kept as it is', () => {
    const flat: FlatSharedState = flattenSharedState(FULL);
    expect(flat.numTasks).toBe(400);
    const migrated = migrateSharedState(flat);
    expect(migrated).toEqual(FULL);
    expect(Object.keys(migrated)).not.toContain('seed');
    expect(migrateSharedState(FULL)).toBe(FULL);
  });

  test('the in-tab model round-trips as "itm"; a malformed model id is refused', () => {
    for (const inTabModel of ['tiny', 'local', 'smollm2-135m-instruct', 'qwen3-0.6b']) {
      const hash = encodeShareHash({ ...FULL, inTabModel });
      expect(hash).toMatch(new RegExp(`(^|&)itm=${inTabModel.replace('.', '\\.')}(&|$)`));
      expect(decodeShareHash(hash).inTabModel).toBe(inTabModel);
    }
    const hash = encodeShareHash(FULL);
    expect(errorOf(hash.replace('itm=qwen2.5-0.5b-instruct', 'itm=Qwen%2FQwen3'))).toMatch(/"itm" is invalid: expected a model id such as "tiny"/);
    expect(errorOf(hash.replace('itm=qwen2.5-0.5b-instruct', `itm=${'a'.repeat(65)}`))).toMatch(/"itm" is invalid/);
  });

  test('the WebLLM policy, its model and the warm-up teacher round-trip; an unknown policy or teacher is refused', () => {
    const state: SharedState = { ...FULL, policy: 'webllm', webllmModel: 'SmolLM2-360M-Instruct-q4f32_1-MLC', teacher: 'endpoint' };
    const hash = encodeShareHash(state);
    expect(hash).toMatch(/(^|&)policy=webllm(&|$)/);
    expect(hash).toMatch(/(^|&)wllm=SmolLM2-360M-Instruct-q4f32_1-MLC(&|$)/);
    expect(decodeShareHash(hash)).toEqual(state);
    expect(errorOf(hash.replace('policy=webllm', 'policy=mlc'))).toMatch(/"policy" is invalid: expected one of expert, endpoint, in-tab, webllm, got "mlc"/);
    expect(errorOf(hash.replace('teacher=endpoint', 'teacher=in-tab'))).toMatch(/"teacher" is invalid: expected one of expert, endpoint, webllm/);
    expect(errorOf(hash.replace(/wllm=[^&]*/, `wllm=${'x'.repeat(201)}`))).toMatch(/"wllm" is invalid: longer than 200 characters/);
  });

  test('a short link whose source decompresses past 500 000 characters is refused while decompressing', () => {
    const hash = encodeShareHash(FULL);
    const bomb = compressToEncodedURIComponent('a'.repeat(600_000));
    expect(bomb.length).toBeLessThan(20_000);
    expect(errorOf(hash.replace(/code=[^&]*/, `code=${bomb}`))).toMatch(/"code" is invalid: the compressed text decompresses to more than 500000 characters/);
  });

  test('a link of another version, or of none, is refused', () => {
    const hash = encodeShareHash(FULL);
    expect(errorOf(hash.replace(/^v=1/, 'v=2'))).toMatch(/format version 2; this TabRL reads version 1\. Nothing was loaded/);
    expect(errorOf(hash.replace(/^v=1&/, ''))).toMatch(/format version \(none\)/);
  });

  test('malformed links name what is wrong', () => {
    const hash = encodeShareHash(FULL);
    expect(errorOf(`${hash}&oops`)).toMatch(/malformed \("oops" has no value\)/);
    expect(errorOf(hash.replace('name=', 'name=%E0%A4%A'))).toMatch(/bad escaping in "name"/);
    expect(errorOf(hash.replace(/&tasks=\d+/, ''))).toMatch(/missing "tasks"/);
    expect(errorOf(hash.replace(/tasks=\d+/, 'tasks=1.5'))).toMatch(/"tasks" is invalid: expected a whole number/);
    expect(errorOf(hash.replace(/tasks=\d+/, 'tasks=0'))).toMatch(/"tasks" is invalid/);
    expect(errorOf(hash.replace(/temp=[^&]+/, 'temp=3'))).toMatch(/"temp" is invalid: expected a number from 0 to 2/);
    expect(errorOf(hash.replace(/temp=[^&]+/, 'temp='))).toMatch(/"temp" is invalid/);
    expect(errorOf(hash.replace('policy=in-tab', 'policy=oracle'))).toMatch(/"policy" is invalid: expected one of expert, endpoint, in-tab/);
    expect(errorOf(hash.replace('mode=train', 'mode=play'))).toMatch(/"mode" is invalid/);
    expect(errorOf(hash.replace(/code=[^&]+$/, 'code=%21%21%21'))).toMatch(/"code" is invalid: the compressed text is damaged/);
    const array = encodeURIComponent(compressToEncodedURIComponent('[1,2]'));
    expect(errorOf(hash.replace(/args=[^&]+/, `args=${array}`))).toMatch(/"args" is invalid: expected a JSON object/);
    const strings = encodeURIComponent(compressToEncodedURIComponent('{"grpoSteps":{"many":true}}'));
    expect(errorOf(hash.replace(/train=[^&]+/, `train=${strings}`))).toMatch(/"train" is invalid: expected a JSON object of numbers/);
  });

  test('an oversized link is refused before it is decoded', () => {
    const hash = `v=1&code=${'A'.repeat(MAX_HASH_LENGTH)}`;
    expect(errorOf(hash)).toMatch(new RegExp(`too long \\(${MAX_HASH_LENGTH + 9} characters; at most ${MAX_HASH_LENGTH}\\)`));
    // Just under the limit is read (and then judged on its content).
    expect(errorOf(`v=1&x=${'A'.repeat(MAX_HASH_LENGTH - 6)}`)).toMatch(/missing "name"/);
  });

  test('a hash without a version or a source is not taken for a link', () => {
    expect(isShareHash('#section-2')).toBe(false);
    expect(isShareHash('#v=1&name=x')).toBe(false);
  });
});
