// The host's check of messages from an environment file's process: every forged or oversized
// message an attacker sent (a null trajectory, 200 MB strings, a "__proto__" reward, 1e308 rewards,
// huge error texts) is refused or cut, with the reason and the rollout it names; real messages pass.
import { expect, test } from 'vitest';
import { checkChildMessage, MAX_ERROR_CHARS } from '../../../src/isolation/message-check.ts';

const MIB = 2 ** 20;

/** A rollout-done message as the child sends one for a finished single-turn rollout. */
function rolloutDone(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'rollout-done',
    rolloutId: 3,
    trajectory: {
      taskIndex: 0,
      prompt: [{ role: 'user', content: 'Spell cat backwards' }],
      completion: [{ role: 'assistant', content: 'tac' }],
      answer: 'tac',
      info: {},
      state: { prompt: [], completion: [], info: {}, turn: 1 },
      reward: 1,
      scores: { exactMatch: 1 },
      errors: [],
      stopReason: 'completed',
      truncated: false,
      turns: [{ finishReason: 'stop', latencyMs: 12 }],
      timings: { generationMs: 12, scoringMs: 1, totalMs: 14 },
      passed: true,
      ...overrides,
    },
  };
}

test('a real rollout-done passes unchanged', () => {
  const message = rolloutDone();
  expect(checkChildMessage(structuredClone(message), 16 * MIB)).toEqual({ ok: true, message });
});

test.each([
  ['a null trajectory', { type: 'rollout-done', rolloutId: 3, trajectory: null }, /rollout-done without a trajectory/],
  ['a reward of 1e308', rolloutDone({ reward: 1e308 }), /reward 1e\+308, not a finite number of at most 1000000000/],
  ['a NaN score', rolloutDone({ scores: { exactMatch: Number.NaN } }), /score NaN for exactMatch/],
  ['a "__proto__" score name', rolloutDone({ scores: JSON.parse('{"__proto__": 1}') }), /"__proto__" key/],
  ['a Map in the state', rolloutDone({ state: { seen: new Map() } }), /not plain data/],
  ['an unknown stop reason', rolloutDone({ stopReason: 'whatever' }), /unknown stopReason/],
  ['a message of an unknown type', { type: 'shell', command: 'rm -rf /' }, /unknown type "shell"/],
  ['a model call for another client', { type: 'create-completion', callId: 1, rolloutId: 3, client: 'admin', request: {} }, /neither policy, judge nor simulator/],
])('%s is refused, naming the rollout', (_what, message, reason) => {
  const checked = checkChildMessage(message, 16 * MIB);
  expect(checked.ok).toBe(false);
  if (checked.ok) return;
  expect(checked.reason).toMatch(reason);
  if ((message as { rolloutId?: number }).rolloutId !== undefined) expect(checked.rolloutId).toBe(3);
});

test('a 200 MB string is refused at the size cap without walking past it', () => {
  const huge = 'x'.repeat(200 * 10 ** 6);
  const checked = checkChildMessage(rolloutDone({ info: { huge } }), 16 * MIB);
  expect(checked).toMatchObject({ ok: false, rolloutId: 3, reason: expect.stringMatching(/over the 16 MiB a message may hold/) });
  // The same string many times over (a shared reference) counts each time JSON would write it.
  const shared = 'y'.repeat(MIB);
  expect(checkChildMessage(rolloutDone({ info: { many: new Array(64).fill(shared) } }), 16 * MIB).ok).toBe(false);
});

test('data that contains itself or nests without end is refused', () => {
  const cycle: Record<string, unknown> = {};
  cycle.self = cycle;
  expect(checkChildMessage(rolloutDone({ info: cycle }), 16 * MIB)).toMatchObject({ ok: false, reason: expect.stringMatching(/contains itself/) });
  let deep: unknown = 'bottom';
  for (let i = 0; i < 1000; i++) deep = [deep];
  expect(checkChildMessage(rolloutDone({ info: { deep } }), 16 * MIB)).toMatchObject({ ok: false, reason: expect.stringMatching(/nested more than 100 levels/) });
});

test('error texts and names are cut to a length a results line and a terminal can hold', () => {
  const long = 'e'.repeat(50 * MIB / 10);
  const failed = checkChildMessage({ type: 'rollout-failed', rolloutId: 1, message: long }, 16 * MIB);
  expect(failed.ok).toBe(true);
  const text = (failed as { message: { message: string } }).message.message;
  expect(text.length).toBeLessThan(MAX_ERROR_CHARS + 100);
  expect(text).toMatch(/more characters cut by tabrl\]$/);
  const withError = checkChildMessage(rolloutDone({ errors: [{ source: 'reward', name: 'judge', message: long }] }), 16 * MIB);
  expect(withError.ok && (withError.message as { trajectory: { errors: { message: string }[] } }).trajectory.errors[0]!.message.length).toBeLessThan(MAX_ERROR_CHARS + 100);
});

test('a loaded message with a "__proto__" reward or duplicate names fails the load', () => {
  const loaded = (rewardNames: string[]) => ({
    type: 'loaded',
    info: { name: 'probe', kind: 'SingleTurnEnv', numTasks: 1, numEvaluationTasks: 1, rewardNames, rewardWeights: rewardNames.map(() => 1), passThreshold: 0.5 },
    setup: { fewShot: [], samplingArgs: {} },
    dataset: [{ question: 'q', answer: 'a' }],
    evalDataset: null,
    demonstrationDataset: null,
  });
  expect(checkChildMessage(loaded(['exactMatch']), 16 * MIB).ok).toBe(true);
  expect(checkChildMessage(loaded(['__proto__']), 16 * MIB)).toMatchObject({ ok: false, reason: expect.stringMatching(/"__proto__", which tabrl cannot use as a key; rename the function/) });
  expect(checkChildMessage(loaded(['a', 'a']), 16 * MIB)).toMatchObject({ ok: false, reason: expect.stringMatching(/two reward functions of the same name/) });
});

test('group verdicts need one pass flag per verdict and bounded rewards', () => {
  const verdict = { reward: 0.5, scores: { diversity: 0.5 }, errors: [] };
  expect(checkChildMessage({ type: 'group-scored', rolloutId: 2, verdicts: [verdict, verdict], passed: [true, false] }, MIB).ok).toBe(true);
  expect(checkChildMessage({ type: 'group-scored', rolloutId: 2, verdicts: [verdict], passed: [true, false] }, MIB).ok).toBe(false);
  expect(checkChildMessage({ type: 'group-scored', rolloutId: 2, verdicts: [{ ...verdict, reward: Infinity }], passed: [true] }, MIB)).toMatchObject({ ok: false, rolloutId: 2 });
});
