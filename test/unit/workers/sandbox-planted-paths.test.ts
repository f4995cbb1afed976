/**
 * The warm-up's expert for tasks planted backwards, in Node over a real comlink MessageChannel (the
 * real sandbox API and the app's real bridge) on lesson 7's Parcelo file: the environment reports
 * how many demonstration tasks have a planted path, and `policy: 'planted-paths'` plays each task's
 * planted calls in the sandbox — the app's client is never asked — so every training task becomes a
 * passing demonstration: the tool calls, the tool results, then the answer or "done". A file without
 * planted tasks is refused with what to choose instead.
 */
import * as Comlink from 'comlink';
import { afterEach, expect, test, vi } from 'vitest';
import { ScriptedClient, SingleTurnEnv, type RolloutRecord } from '../../../src/envs/index.ts';
import loadParcelDesk, { PRACTICE_TASKS, TASKS } from '../../../src/ui/features/lessons/sources/parcel-desk.ts';
import { createSandboxApi } from '../../../src/workers/sandbox/sandbox-api.ts';

vi.mock('virtual:tabrl-sandbox-runtime', () => ({ default: '/* the runtime is faked in Node */' }));
const { openSandbox } = await import('../../../src/workers/sandbox-bridge.ts');

const ports: MessagePort[] = [];
afterEach(() => {
  for (const port of ports.splice(0)) port.close();
});

/** A session on `env` whose app-side policy counts the calls it gets. */
async function session(env: () => unknown, asked: string[]) {
  const createFrame = async () => {
    const channel = new MessageChannel();
    ports.push(channel.port1, channel.port2);
    Comlink.expose(createSandboxApi(() => ({ default: env })), channel.port2 as unknown as Comlink.Endpoint);
    return { port: channel.port1, onError: () => {}, dispose: () => channel.port1.close() };
  };
  return openSandbox({ code: 'env', label: 'env', args: {}, client: new ScriptedClient(() => (asked.push('policy'), 'no idea')), createFrame });
}

test("lesson 7's training tasks play their planted paths into passing demonstrations, without asking the app's client", async () => {
  const asked: string[] = [];
  const opened = await session(() => loadParcelDesk({}), asked);
  expect(opened.info.plantedPaths).toBe(TASKS.length + PRACTICE_TASKS.length);
  const records: RolloutRecord[] = [];
  try {
    await opened.evaluate({ rolloutsPerTask: 1, concurrency: 4, samplingArgs: {}, model: 'planted-paths', split: 'demonstration', policy: 'planted-paths' }, (record) => records.push(record));
  } finally {
    opened.dispose();
  }
  expect(asked).toEqual([]);
  expect(records).toHaveLength(260);
  expect(records.every((record) => record.passed && record.errors.length === 0)).toBe(true);
  // The planted path starts with the call the question names: the partial credit is earned beside the answer or the reached state.
  expect(records.every((record) => record.scores.firstCallReward === 1 && record.reward === 1.5)).toBe(true);
  const write = records.find((record) => record.info.kind === 'write')!;
  const roles = write.completion.map((message) => (message.role === 'assistant' && message.tool_calls ? `call ${message.tool_calls[0]!.function.name}` : message.role));
  expect(roles).toEqual(['call find_parcels', 'tool', 'call track_parcel', 'tool', 'call reschedule_delivery', 'tool', 'assistant']);
  expect(write.completion.at(-1)!.content).toBe('done');
  const field = records.find((record) => record.info.kind === 'field')!;
  expect(field.completion.at(-1)!.content).toBe(TASKS.find((task) => task.info!.kind === 'field')!.answer);
});

test('a file without planted tasks reports none, and refuses to play planted paths', async () => {
  const asked: string[] = [];
  const opened = await session(() => new SingleTurnEnv({ name: 'plain', dataset: [{ question: 'q', answer: 'a' }] }), asked);
  expect(opened.info.plantedPaths).toBeUndefined();
  try {
    await expect(opened.evaluate({ rolloutsPerTask: 1, concurrency: 1, samplingArgs: {}, model: 'x', split: 'demonstration', policy: 'planted-paths' })).rejects.toThrow(
      /plain's tasks were not planted backwards \(no info.planted\), so they have no reference paths to play: choose the endpoint or a WebLLM model/,
    );
  } finally {
    opened.dispose();
  }
  expect(asked).toEqual([]);
});
