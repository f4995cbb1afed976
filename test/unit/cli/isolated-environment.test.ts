// The isolated process of an environment file, driven as evaluate() drives it: the permission model
// really refuses what environment code could reach, a process that runs out of memory or is killed
// fails only the rollouts to blame, and the innocent ones come out whole.
import { afterEach, expect, test } from 'vitest';
import { evaluate, ScriptedClient } from '../../../src/envs/index.ts';
import { loadIsolatedEnvironment, type IsolatedEnvironment } from '../../../src/cli/isolated-environment.ts';
import { writeEnvFile } from '../../support/tabrl-cli.ts';

let env: IsolatedEnvironment | undefined;
afterEach(() => {
  env?.close();
  env = undefined;
});

const echo = new ScriptedClient((messages) => messages.at(-1)!.content);

const writeEnv = (source: string) => writeEnvFile(source, 'env.mjs');

const ENV = `
import { SingleTurnEnv, Rubric } from 'tabrl';
const probeReward = (ctx) => {
  if (ctx.answer === 'binding') {
    // process.binding reaches fs without an import: the permission model still refuses it.
    try { process.binding('fs'); ctx.state.binding = 'allowed'; } catch (error) { ctx.state.binding = error.code; }
  }
  if (ctx.answer === 'memory') {
    const hoard = [];
    for (;;) hoard.push(new Array(1e6).fill(hoard.length));
  }
  return 1;
};
export default function loadEnvironment() {
  return new SingleTurnEnv({ name: 'probe', dataset: ['fine', 'binding', 'memory', 'fine2'].map((word) => ({ question: word, answer: word })), rubric: new Rubric({ funcs: [probeReward] }) });
}
`;

test('the permission model refuses process.binding; running out of memory fails that rollout alone', { timeout: 60_000 }, async () => {
  env = await loadIsolatedEnvironment(writeEnv(ENV), {}, { memoryMb: 64, timeLimitMs: 20_000 });
  expect(env.info).toMatchObject({ name: 'probe', kind: 'SingleTurnEnv', rewardNames: ['probeReward'] });
  const result = await evaluate(env, echo, { concurrency: 4 });
  const byAnswer = new Map(result.records.map((record) => [record.answer, record]));
  expect(byAnswer.get('binding')!.state.binding).toBe('ERR_ACCESS_DENIED');
  expect(byAnswer.get('memory')).toMatchObject({ reward: 0, stopReason: 'error' });
  expect(byAnswer.get('memory')!.errors[0]!.message).toContain('ran out of memory (over the 64 MiB heap it may use)');
  for (const answer of ['fine', 'binding', 'fine2']) expect(byAnswer.get(answer)).toMatchObject({ reward: 1, errors: [], passed: true });
});

test('a rollout is cancelled through the process when the run is interrupted', { timeout: 30_000 }, async () => {
  env = await loadIsolatedEnvironment(writeEnv(ENV), {});
  const controller = new AbortController();
  const slow = new ScriptedClient(async (messages) => {
    controller.abort();
    await new Promise((resolve) => setTimeout(resolve, 50));
    return messages.at(-1)!.content;
  });
  const result = await evaluate(env, slow, { concurrency: 1, signal: controller.signal });
  expect(result.stoppedEarly).toBe('cancelled');
  expect(result.records).toHaveLength(0);
});

test('environment code that takes the message listener away cannot hang the run', { timeout: 30_000 }, async () => {
  env = await loadIsolatedEnvironment(writeEnv(`
import { SingleTurnEnv, Rubric } from 'tabrl';
const deafReward = (ctx) => {
  if (ctx.answer === 'deaf') process.removeAllListeners('message');
  return new Promise((resolve) => setTimeout(() => resolve(1), 10));
};
export default function loadEnvironment() {
  return new SingleTurnEnv({ name: 'deaf', dataset: [{ question: 'deaf', answer: 'deaf' }, { question: 'fine', answer: 'fine' }], rubric: new Rubric({ funcs: [deafReward] }) });
}
`), {}, { timeLimitMs: 500 });
  const result = await evaluate(env, echo, { concurrency: 1 });
  expect(result.records.map((record) => record.reward)).toEqual([1, 1]);
  const after = await evaluate(env, echo, { concurrency: 2 });
  expect(after.records).toHaveLength(2);
});

test('demonstration tasks cross the process boundary, and a rollout on one runs the child’s own task', { timeout: 30_000 }, async () => {
  env = await loadIsolatedEnvironment(writeEnv(`
import { SingleTurnEnv, Rubric } from 'tabrl';
// Each task's info holds a Set, which survives only in the child's own copy of the task (as data it
// becomes an array): a rollout the child looked up by split and index scores 1, a task sent over
// as data would score 0.
const task = (word) => ({ question: word, answer: word, info: { mark: new Set([word]) } });
const isOwn = (ctx) => (ctx.info.mark instanceof Set ? 1 : 0);
export default function loadEnvironment() {
  return new SingleTurnEnv({ name: 'demos', dataset: [task('train')], evalDataset: [task('held')], demonstrationDataset: [task('demo-a'), task('demo-b')], rubric: new Rubric({ funcs: [isOwn] }) });
}
`), {});
  expect(env.demonstrationTasks.map((task) => task.answer)).toEqual(['demo-a', 'demo-b']);
  expect(env.dataset.map((task) => task.answer)).toEqual(['train']);
  const result = await evaluate(env, echo, { tasks: env.demonstrationTasks });
  expect(result.records.map((record) => [record.answer, record.reward])).toEqual([['demo-a', 1], ['demo-b', 1]]);
});

test('a split that is not an array fails the load with a message naming it', { timeout: 30_000 }, async () => {
  const source = `
import { SingleTurnEnv, Rubric } from 'tabrl';
const oneReward = () => 1;
export default function loadEnvironment() {
  const env = new SingleTurnEnv({ name: 'broken', dataset: [{ question: 'a', answer: 'a' }], rubric: new Rubric({ funcs: [oneReward] }) });
  return Object.assign(env, { demonstrationDataset: 'not tasks' });
}
`;
  await expect(loadIsolatedEnvironment(writeEnv(source), {})).rejects.toThrow(/demonstrationDataset must be an array of tasks, got/);
});
