/**
 * Which tasks the playground's sandbox rolls out for each split, in Node over a real comlink
 * MessageChannel (the real sandbox API and the app's real bridge): warm-up demonstrations use the
 * environment's demonstration tasks when it sets them apart (lesson 6: demonstration answers,
 * never the RL games' practice answers), the training set for `train`, the held-out set by default.
 */
import * as Comlink from 'comlink';
import { afterEach, expect, test, vi } from 'vitest';
import { ScriptedClient, SingleTurnEnv, type RolloutRecord } from '../../../src/envs/index.ts';
import { createSandboxApi } from '../../../src/workers/sandbox/sandbox-api.ts';

vi.mock('virtual:tabrl-sandbox-runtime', () => ({ default: '/* the runtime is faked in Node */' }));
const { openSandbox } = await import('../../../src/workers/sandbox-bridge.ts');

const ports: MessagePort[] = [];
afterEach(() => {
  for (const port of ports.splice(0)) port.close();
});

/** An environment whose three task sets have recognisable questions. */
function threeSplitEnv() {
  return new SingleTurnEnv({
    name: 'three-splits',
    dataset: [{ question: 'rl-1' }, { question: 'rl-2' }],
    demonstrationDataset: [{ question: 'demo-1' }, { question: 'demo-2' }],
    evalDataset: [{ question: 'eval-1' }],
  });
}

async function questionsRolledOut(env: () => unknown, split: 'eval' | 'train' | 'demonstration' | undefined): Promise<string[]> {
  const createFrame = async () => {
    const channel = new MessageChannel();
    ports.push(channel.port1, channel.port2);
    Comlink.expose(createSandboxApi(() => ({ default: env })), channel.port2 as unknown as Comlink.Endpoint);
    return { port: channel.port1, onError: () => {}, dispose: () => channel.port1.close() };
  };
  const session = await openSandbox({ code: 'env', label: 'three-splits', args: {}, client: new ScriptedClient(() => 'ok'), createFrame });
  const records: RolloutRecord[] = [];
  await session.evaluate({ rolloutsPerTask: 1, concurrency: 1, samplingArgs: {}, model: 'policy', ...(split ? { split } : {}) }, (record) => records.push(record));
  session.dispose();
  return records.map((record) => String(record.prompt.at(-1)?.content)).sort();
}

test('demonstrations come from the demonstration tasks, training from the dataset, evaluation from the held-out set', async () => {
  expect(await questionsRolledOut(threeSplitEnv, 'demonstration')).toEqual(['demo-1', 'demo-2']);
  expect(await questionsRolledOut(threeSplitEnv, 'train')).toEqual(['rl-1', 'rl-2']);
  expect(await questionsRolledOut(threeSplitEnv, undefined)).toEqual(['eval-1']);
});

test('an environment without demonstration tasks makes its demonstrations on the training set', async () => {
  const plain = () => new SingleTurnEnv({ name: 'plain', dataset: [{ question: 'rl-1' }], evalDataset: [{ question: 'eval-1' }] });
  expect(await questionsRolledOut(plain, 'demonstration')).toEqual(['rl-1']);
});
