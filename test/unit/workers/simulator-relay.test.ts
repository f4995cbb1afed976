/**
 * The tool simulator the tab lends, across the sandbox in Node over a real comlink MessageChannel:
 * the sandbox's real API (createSandboxApi) loads lesson 7's Parcelo environment and the app's real
 * bridge (openSandbox) lends it a simulator, as `args.simulatorClient` with `args.simulatorModel`.
 * Its calls come back to the app (the simulated tool answers with the lent model's result, not the
 * file's scripted one), its key never crosses, and a simulator that fails ends only the rollouts that
 * called it, as environment errors; without one the file keeps its scripted simulator.
 */
import * as Comlink from 'comlink';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { ChatClientError, ScriptedClient, type ChatClient, type Message, type RolloutRecord } from '../../../src/envs/index.ts';
import loadParcelDesk from '../../../src/ui/features/lessons/sources/parcel-desk.ts';
import { createSandboxApi } from '../../../src/workers/sandbox/sandbox-api.ts';

vi.mock('virtual:tabrl-sandbox-runtime', () => ({ default: '/* the runtime is faked in Node */' }));
const { openSandbox } = await import('../../../src/workers/sandbox-bridge.ts');

const SECRET = 'sk-simulator-secret-456';
const ports: MessagePort[] = [];
afterEach(() => {
  for (const port of ports.splice(0)) port.close();
});

/** A sandbox frame in this process: the real sandbox API on one end of a channel; every message that reaches it is kept as text. */
function fakeFrame(seen: string[], received: Array<Record<string, unknown>>) {
  return async () => {
    const channel = new MessageChannel();
    ports.push(channel.port1, channel.port2);
    channel.port2.addEventListener('message', (event: MessageEvent) => seen.push(JSON.stringify(event.data) ?? ''));
    const api = createSandboxApi(() => ({
      default: (args: Record<string, unknown>) => {
        received.push(args);
        return loadParcelDesk(args);
      },
    }));
    Comlink.expose(api, channel.port2 as unknown as Comlink.Endpoint);
    return { port: channel.port1, onError: () => {}, dispose: () => channel.port1.close() };
  };
}

/** A policy that tracks parcel PX-1005 (a recorded parcel, planted in no task, so the simulator is asked), then answers with the location it got. */
const tracker = new ScriptedClient((messages: Message[]) => {
  const tool = messages.findLast((message) => message.role === 'tool');
  if (tool) return String((JSON.parse(tool.content) as { location?: string }).location ?? 'unknown');
  return { tool_calls: [{ id: 'a', type: 'function', function: { name: 'track_parcel', arguments: JSON.stringify({ tracking_id: 'PX-1005' }) } }] };
});

/** A simulator model with a key in its closure that answers every call with one parcel record (after `delayMs`), or fails with `error`. */
function keyedSimulator(prompts: string[], error?: Error, delayMs = 0): ChatClient {
  return {
    chat: {
      completions: {
        async create(request) {
          expect(`Bearer ${SECRET}`).toContain(SECRET);
          prompts.push(request.messages.at(-1)?.content ?? '');
          if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
          if (error) throw error;
          return { id: 's', model: request.model, choices: [{ index: 0, message: { role: 'assistant', content: '{"tracking_id":"PX-1005","status":"lost","location":"Oslo hub","eta":"2026-04-01"}' }, finish_reason: 'stop' }] };
        },
      },
    },
  };
}

/** Two held-out tasks played by the tracker in a fresh session with `simulator` lent (or none); the records and the arguments the environment got. */
async function play(simulator: Parameters<typeof openSandbox>[0]['simulator'], seen: string[] = [], timeLimitMs?: number) {
  const received: Array<Record<string, unknown>> = [];
  const session = await openSandbox({
    code: 'parcel-desk',
    label: 'parcel-desk',
    args: {},
    client: tracker,
    ...(simulator ? { simulator } : {}),
    ...(timeLimitMs !== undefined ? { timeLimitMs } : {}),
    createFrame: fakeFrame(seen, received),
  });
  const records: RolloutRecord[] = [];
  try {
    const result = await session.evaluate({ numTasks: 2, rolloutsPerTask: 1, concurrency: 1, samplingArgs: {}, model: 'tracker' }, (record) => records.push(record));
    return { records, args: received[0]!, stoppedEarly: result.stoppedEarly };
  } finally {
    session.dispose();
  }
}

const toolReply = (record: RolloutRecord) => record.completion.find((message) => message.role === 'tool')?.content;

describe('a tool simulator lent to the sandbox', () => {
  test('the simulated tools ask the lent model, which gets its model name; the key never reaches the sandbox', async () => {
    const seen: string[] = [];
    const prompts: string[] = [];
    const { records, args } = await play({ client: keyedSimulator(prompts), model: 'sim-model-y', label: 'endpoint sim-model-y at http://sim.test/v1' }, seen);
    expect(args.simulatorModel).toBe('sim-model-y');
    expect(records.map(toolReply)).toEqual([expect.stringContaining('Oslo hub'), expect.stringContaining('Oslo hub')]);
    // One call per task (each task is a group of its own), prompted with the tool's recorded calls.
    expect(prompts).toHaveLength(2);
    expect(prompts[0]).toContain('You simulate the tool "track_parcel"');
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.join('\n')).not.toContain(SECRET);
  });

  test('without a lent simulator the file keeps its scripted one (the recorded PX-1005) and gets no simulatorModel', async () => {
    const { records, args } = await play(undefined);
    expect(args).toEqual({});
    expect(records.map(toolReply)).toEqual([expect.stringContaining('Turin hub'), expect.stringContaining('Turin hub')]);
  });

  test('a simulator that fails ends the rollouts that called it as environment errors; the run itself goes on', async () => {
    const prompts: string[] = [];
    const { records, stoppedEarly } = await play({ client: keyedSimulator(prompts, new ChatClientError('401 Unauthorized', 'auth', 401)), model: 'm', label: 'endpoint m' });
    expect(stoppedEarly).toBeUndefined();
    expect(records).toHaveLength(2);
    for (const record of records) {
      expect(toolReply(record)).toBeUndefined();
      expect(record.errors[0]).toMatchObject({ source: 'env' });
      expect(record.errors[0]!.message).toContain('the simulator model failed on track_parcel: 401 Unauthorized');
    }
  });

  test('a simulator slower than the time limit is waited for, as a judge is: its calls come from environment code but are not environment code', async () => {
    const prompts: string[] = [];
    const { records, stoppedEarly } = await play({ client: keyedSimulator(prompts, undefined, 250), model: 'slow', label: 'slow simulator' }, [], 100);
    expect(stoppedEarly).toBeUndefined();
    expect(records.map((record) => record.errors)).toEqual([[], []]);
    expect(records.map(toolReply)).toEqual([expect.stringContaining('Oslo hub'), expect.stringContaining('Oslo hub')]);
  });
});
