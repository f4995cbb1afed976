// The isolated process of an environment file, driven as evaluate() drives it: environment code runs
// in an engine where Node's APIs do not exist, a rollout that runs out of the engine's memory fails
// alone, and the innocent ones come out whole.
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
    // process.binding reached fs without an import in a Node process; the engine has no process at all.
    try { process.binding('fs'); ctx.state.binding = 'allowed'; } catch (error) { ctx.state.binding = error.name + ': ' + error.message; }
  }
  if (ctx.answer === 'memory') {
    const hoard = [];
    for (;;) hoard.push(new Float64Array(1e5));
  }
  return 1;
};
export default function loadEnvironment() {
  return new SingleTurnEnv({ name: 'probe', dataset: ['fine', 'binding', 'memory', 'fine2'].map((word) => ({ question: word, answer: word })), rubric: new Rubric({ funcs: [probeReward] }) });
}
`;

test('environment code finds no process; running out of memory fails that rollout alone', { timeout: 60_000 }, async () => {
  env = await loadIsolatedEnvironment(writeEnv(ENV), {}, { memoryMb: 64, timeLimitMs: 20_000 });
  expect(env.info).toMatchObject({ name: 'probe', kind: 'SingleTurnEnv', rewardNames: ['probeReward'] });
  const result = await evaluate(env, echo, { concurrency: 4 });
  const byAnswer = new Map(result.records.map((record) => [record.answer, record]));
  expect(byAnswer.get('binding')!.state.binding).toBe("ReferenceError: 'process' is not defined");
  // The engine's memory limit (64 MiB, all of it) stops the hoard; the reward function's error says so.
  expect(byAnswer.get('memory')).toMatchObject({ reward: 0, passed: false });
  expect(byAnswer.get('memory')!.errors[0]!.message).toContain('out of memory');
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

test('environment code cannot take the message listener away, and the run goes on', { timeout: 30_000 }, async () => {
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
  // The engine has no process whose listeners the code could remove: the attempt throws, the reward scores 0.
  expect(result.records.map((record) => record.reward)).toEqual([0, 1]);
  expect(result.records[0]!.errors[0]!.message).toContain("'process' is not defined");
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

test('32 rollouts in flight on one run signal print no MaxListenersExceededWarning (tabrl train ENV_FILE did)', { timeout: 60_000 }, async () => {
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(warning.name);
  process.on('warning', onWarning);
  try {
    env = await loadIsolatedEnvironment(writeEnv(`
import { SingleTurnEnv, Rubric } from 'tabrl';
const oneReward = () => 1;
export default function loadEnvironment() {
  return new SingleTurnEnv({ name: 'wide', dataset: Array.from({ length: 32 }, (_, i) => ({ question: 'q' + i, answer: 'a' })), rubric: new Rubric({ funcs: [oneReward] }) });
}
`), {});
    const slow = new ScriptedClient(async () => {
      await new Promise((resolve) => setTimeout(resolve, 100));
      return 'a';
    });
    const result = await evaluate(env, slow, { numTasks: 32, concurrency: 32, signal: new AbortController().signal });
    expect(result.records).toHaveLength(32);
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings).not.toContain('MaxListenersExceededWarning');
  } finally {
    process.off('warning', onWarning);
  }
});
