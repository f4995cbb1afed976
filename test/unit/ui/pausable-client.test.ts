/** A paused evaluation starts no new rollouts: a rollout's first model call waits while paused; calls of rollouts under way go through; abort releases a held call. */
import { describe, expect, test } from 'vitest';
import type { ChatClient, ChatCompletion, Message } from '../../../src/envs/index.ts';
import { pausableClient } from '../../../src/ui/features/jobs/pausable-client.ts';
import { PauseGate } from '../../../src/workers/engine/pause-gate.ts';

function countingClient(): { client: ChatClient; calls: Message[][] } {
  const calls: Message[][] = [];
  const client: ChatClient = {
    chat: { completions: { async create(request) {
      calls.push(request.messages);
      return { choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] } as unknown as ChatCompletion;
    } } },
  };
  return { client, calls };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('pausableClient', () => {
  test('holds first calls while paused and lets calls of rollouts under way through', async () => {
    const gate = new PauseGate();
    const { client, calls } = countingClient();
    const pausable = pausableClient(client, gate);
    gate.pause();
    const first = pausable.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'new task' }] });
    const ongoing = pausable.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }, { role: 'user', content: 'c' }] });
    await ongoing;
    await tick();
    expect(calls.map((messages) => messages.at(-1)!.content)).toEqual(['c']);
    gate.resume();
    await first;
    expect(calls.map((messages) => messages.at(-1)!.content)).toEqual(['c', 'new task']);
  });

  test('an aborted request is released while paused (Stop works)', async () => {
    const gate = new PauseGate();
    const { client, calls } = countingClient();
    gate.pause();
    const controller = new AbortController();
    const held = pausableClient(client, gate).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }], signal: controller.signal });
    await tick();
    expect(calls).toHaveLength(0);
    controller.abort();
    await held;
    expect(calls).toHaveLength(1);
  });
});
