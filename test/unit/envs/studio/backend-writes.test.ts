/**
 * The simulated backend's state: a write changes what later reads of the same entity return in the
 * episode, with the offline scripted simulator (which only retrieves records) and with a model
 * simulator (here one that keeps repeating the stale value), over the shipped Parcelo traces and a
 * write task planted from them; a failed write, another entity and another episode are untouched.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { Rubric, ScriptedClient, type ChatClient, type ChatRequest, type Message, type Task } from '../../../../src/envs/index.ts';
import {
  applyEpisodeWrites,
  plantBackwardsTasks,
  plantedEnvironmentTask,
  reachedStateReward,
  ScriptedSimulatorClient,
  SimulatedToolEnv,
  tasksFromTraces,
  ToolSimulator,
  writtenFieldNames,
} from '../../../../src/envs/studio/index.ts';

const { tools, records } = tasksFromTraces(readFileSync(fileURLToPath(new URL('../../../../docs/examples/parcel-desk-traces.jsonl', import.meta.url)), 'utf8'));
const writeTask = plantBackwardsTasks(records, 6, 0, ['write'])[0]!;
const parcelId = writeTask.goal!.arguments.tracking_id as string;
const customer = writeTask.records[0]!.arguments.customer as string;
const plantedEta = (JSON.parse(writeTask.records[1]!.result) as { eta: string }).eta;

/** A policy that makes `calls` in order (one per turn), then replies "done". */
function calling(calls: Array<[string, Record<string, unknown>]>): ScriptedClient {
  return new ScriptedClient((messages: Message[]) => {
    const made = messages.filter((message) => message.role === 'tool').length;
    const next = calls[made];
    return next ? { tool_calls: [{ id: `call_${made}`, type: 'function', function: { name: next[0], arguments: JSON.stringify(next[1]) } }] } : 'done';
  });
}

/** The tool replies of one rollout of `task` by `policy` with the simulator model `client`. */
async function toolReplies(client: ChatClient, policy: ScriptedClient, task: Task = plantedEnvironmentTask(writeTask)): Promise<{ replies: string[]; reward: number }> {
  const env = new SimulatedToolEnv({ name: 'parcelo', dataset: [task], simulator: new ToolSimulator({ tools, records, client }), rubric: new Rubric({ funcs: [reachedStateReward] }), maxTurns: 8 });
  const trajectory = await env.rollout(policy, env.dataset[0]!);
  expect(trajectory.errors).toEqual([]);
  return { replies: trajectory.completion.filter((message) => message.role === 'tool').map((message) => message.content), reward: trajectory.reward };
}

const eta = (reply: string | undefined) => (JSON.parse(reply ?? '{}') as { eta?: string }).eta;

describe('writes change later reads in an episode', () => {
  test('the traces say where a written argument shows up: reschedule_delivery date comes back as eta', () => {
    expect(writtenFieldNames(records).get('reschedule_delivery')?.get('date')).toEqual(['eta']);
    expect(writtenFieldNames(records).has('track_parcel')).toBe(false);
  });

  test('with the scripted simulator: track, reschedule, track again shows the new eta; the listing and other parcels are untouched', async () => {
    expect(plantedEta).not.toBe('2026-03-22');
    const { replies, reward } = await toolReplies(
      new ScriptedSimulatorClient(),
      calling([
        ['find_parcels', { customer }],
        ['track_parcel', { tracking_id: parcelId }],
        ['reschedule_delivery', { tracking_id: parcelId, date: '2026-03-22' }],
        ['track_parcel', { tracking_id: parcelId }],
        ['track_parcel', { tracking_id: 'PX-1005' }],
        ['find_parcels', { customer }],
      ]),
    );
    expect(eta(replies[1])).toBe(plantedEta);
    // The write's own result shows the date it was given, not the planted goal's (the nearest record).
    expect(eta(replies[2])).toBe('2026-03-22');
    expect(eta(replies[3])).toBe('2026-03-22');
    expect(JSON.parse(replies[3]!)).toMatchObject({ tracking_id: parcelId, status: JSON.parse(replies[1]!).status, location: JSON.parse(replies[1]!).location });
    expect(replies[4]).toBe(records.find((record) => record.tool === 'track_parcel' && record.arguments.tracking_id === 'PX-1005')!.result);
    expect(replies[5]).toBe(replies[0]);
    // The goal was 2026-03-25: this episode reached another state.
    expect(reward).toBe(0);
  });

  test('the goal write, then a read, then a second write: each read shows the latest write, and the goal is judged on the last write', async () => {
    const goalDate = writeTask.goal!.arguments.date as string;
    const { replies, reward } = await toolReplies(
      new ScriptedSimulatorClient(),
      calling([
        ['reschedule_delivery', { tracking_id: parcelId, date: goalDate }],
        ['track_parcel', { tracking_id: parcelId }],
        ['reschedule_delivery', { tracking_id: parcelId, date: '2026-03-29' }],
        ['track_parcel', { tracking_id: parcelId }],
      ]),
    );
    expect([eta(replies[1]), eta(replies[3])]).toEqual([goalDate, '2026-03-29']);
    expect(reward).toBe(0);
    const undone = await toolReplies(new ScriptedSimulatorClient(), calling([['reschedule_delivery', { tracking_id: parcelId, date: goalDate }], ['track_parcel', { tracking_id: parcelId }]]));
    expect([eta(undone.replies[1]), undone.reward]).toEqual([goalDate, 1]);
  });

  test('a failed write changes nothing: rescheduling a delivered parcel', async () => {
    const delivered: Task = { prompt: [{ role: 'user', content: 'Move PX-1007 to 2026-03-29.' }] };
    const { replies } = await toolReplies(
      new ScriptedSimulatorClient(),
      calling([
        ['track_parcel', { tracking_id: 'PX-1007' }],
        ['reschedule_delivery', { tracking_id: 'PX-1007', date: '2026-03-25' }],
        ['track_parcel', { tracking_id: 'PX-1007' }],
      ]),
      delivered,
    );
    expect(JSON.parse(replies[1]!)).toMatchObject({ ok: false, error: 'already delivered' });
    expect(replies[2]).toBe(replies[0]);
  });

  test('with a model simulator that repeats the stale eta, the read after the write still shows the write; the next episode starts from the planted state', async () => {
    const prompts: string[] = [];
    const stale: ChatClient = {
      chat: {
        completions: {
          create: async (request: ChatRequest) => {
            const prompt = request.messages[0]!.content;
            prompts.push(prompt);
            const write = prompt.endsWith(`reschedule_delivery\n${JSON.stringify({ tracking_id: parcelId, date: '2026-03-23' })}\n### Result\n`);
            const content = write ? JSON.stringify({ tracking_id: parcelId, ok: true }) : JSON.stringify({ tracking_id: parcelId, status: 'in transit', location: 'Turin hub', eta: plantedEta });
            return { id: 's', model: request.model, choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }] };
          },
        },
      },
    };
    const task: Task = { prompt: [{ role: 'user', content: `Move ${parcelId} to 2026-03-23.` }] };
    const policy = () =>
      calling([
        ['track_parcel', { tracking_id: parcelId }],
        ['reschedule_delivery', { tracking_id: parcelId, date: '2026-03-23' }],
        ['track_parcel', { tracking_id: parcelId, verbose: true }],
      ]);
    const { replies } = await toolReplies(stale, policy(), task);
    expect(eta(replies[0])).toBe(plantedEta);
    expect(eta(replies[2])).toBe('2026-03-23');
    // The model was shown the write as a fact of the episode.
    expect(prompts.at(-1)).toContain('Facts of this episode');
    expect(prompts.at(-1)).toContain('"date":"2026-03-23"');
    // Same task, new episode: nothing written yet.
    const again = await toolReplies(stale, calling([['track_parcel', { tracking_id: parcelId }]]), task);
    expect(eta(again.replies[0])).toBe(plantedEta);
  });

  test('results that are not JSON, and reads of another entity, come back as the same text', () => {
    const write = { tool: 'update_note', arguments: { note_id: 'N-7', text: 'call back' }, result: '{"note_id":"N-7","ok":true}' };
    const fields = writtenFieldNames([write]);
    expect(applyEpisodeWrites('plain text N-7', { tool: 'read_note', arguments: { note_id: 'N-7' } }, [write], fields)).toBe('plain text N-7');
    const other = '{ "note_id": "N-8", "text": "old" }';
    expect(applyEpisodeWrites(other, { tool: 'read_note', arguments: { note_id: 'N-7' } }, [write], fields)).toBe(other);
    expect(JSON.parse(applyEpisodeWrites('{"note_id":"N-7","text":"old"}', { tool: 'read_note', arguments: { note_id: 'N-7' } }, [write], fields))).toEqual({ note_id: 'N-7', text: 'call back' });
  });
});
