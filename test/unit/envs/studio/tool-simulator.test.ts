import { describe, expect, test } from 'vitest';
import { ChatClientError, evaluate, Rubric, ScriptedClient, type ChatClient, type ChatRequest, type Message, type ToolSchema } from '../../../../src/envs/index.ts';
import { fieldAgreement, measureFidelity, nearestRecords, ScriptedSimulatorClient, SimulatedToolEnv, SimulatorError, splitHeldOut, ToolSimulator, type ToolRecord } from '../../../../src/envs/studio/index.ts';

const schema = (name: string, properties: Record<string, unknown>): ToolSchema => ({ type: 'function', function: { name, description: name, parameters: { type: 'object', properties } } });
const TOOLS = [schema('track_parcel', { tracking_id: { type: 'string' } }), schema('search_notes', { query: { type: 'string' }, limit: { type: 'integer' } })];
const parcel = (id: string, status: string): ToolRecord => ({ tool: 'track_parcel', arguments: { tracking_id: id }, result: JSON.stringify({ tracking_id: id, status }) });
const RECORDS: ToolRecord[] = [
  parcel('PX-1001', 'in transit'),
  parcel('PX-1002', 'delivered'),
  { tool: 'search_notes', arguments: { query: 'late delivery refund policy', limit: 3 }, result: '["refunds after 5 days"]' },
  { tool: 'search_notes', arguments: { query: 'opening hours of the desk', limit: 3 }, result: '["8:00-18:00"]' },
  { tool: 'search_notes', arguments: { query: 'refund for a damaged parcel', limit: 5 }, result: '["photo needed"]' },
  parcel('PX-1003', 'held at depot'),
];

/** A simulator model that answers every prompt differently (a counter), to show where consistency comes from. */
function countingSimulator(): ChatClient & { prompts: string[] } {
  const prompts: string[] = [];
  return {
    prompts,
    chat: { completions: { create: async (request: ChatRequest) => {
      prompts.push(request.messages[0]!.content);
      return { id: 'c', model: request.model, choices: [{ index: 0, message: { role: 'assistant', content: JSON.stringify({ answer: prompts.length }) }, finish_reason: 'stop' }] };
    } } },
  };
}

const callTool = (name: string, args: Record<string, unknown>, id: string) => ({ tool_calls: [{ id, type: 'function' as const, function: { name, arguments: JSON.stringify(args) } }] });

describe('retrieval over recorded calls', () => {
  test('same tool only, the same arguments first, then the closest words; ties keep the recorded order', () => {
    expect(nearestRecords(RECORDS, 'track_parcel', { tracking_id: 'PX-1002' }, 2).map((scored) => [scored.record.arguments.tracking_id, scored.similarity])).toEqual([['PX-1002', 1], ['PX-1001', 1 / 3]]);
    const notes = nearestRecords(RECORDS, 'search_notes', { query: 'refund policy for late parcels', limit: 3 }, 3);
    expect(notes.map((scored) => scored.record.result)).toEqual(['["refunds after 5 days"]', '["8:00-18:00"]', '["photo needed"]']);
    expect(notes[0]!.similarity).toBeCloseTo((3 / 6 + 1) / 2);
    expect(nearestRecords(RECORDS, 'no_such_tool', {}, 3)).toEqual([]);
  });

  test('the scripted simulator answers with the nearest record its prompt shows; a planted record answers its own call only', async () => {
    const simulator = new ToolSimulator({ tools: TOOLS, records: RECORDS, client: new ScriptedSimulatorClient() });
    expect(await simulator.simulate({ tool: 'track_parcel', arguments: { tracking_id: 'PX-1003' } }, { key: 'a', planted: [], calls: [] })).toBe(RECORDS[5]!.result);
    const planted = parcel('PX-1003', 'lost');
    expect(await simulator.simulate({ tool: 'track_parcel', arguments: { tracking_id: 'PX-1003' } }, { key: 'b', planted: [planted], calls: [] })).toBe(planted.result);
    // A call as far from the planted record as from the recorded ones gets a recorded one: the planted answer does not leak to any id.
    expect(await simulator.simulate({ tool: 'track_parcel', arguments: { tracking_id: 'PX-7777' } }, { key: 'c', planted: [planted], calls: [] })).toBe(RECORDS[0]!.result);
  });
});

describe('consistency of simulated tools', () => {
  test('the same call gets the same result within an episode and across a GRPO group, from one simulator call', async () => {
    const client = countingSimulator();
    const simulator = new ToolSimulator({ tools: TOOLS, records: RECORDS, client });
    const policy = new ScriptedClient((messages: Message[]) => {
      const toolTurns = messages.filter((message) => message.role === 'tool').length;
      if (toolTurns === 0) return callTool('track_parcel', { tracking_id: 'PX-1009' }, 'a');
      if (toolTurns === 1) return callTool('track_parcel', { tracking_id: 'PX-1009' }, 'b');
      if (toolTurns === 2) return callTool('search_notes', { query: 'refunds', limit: 1 }, 'c');
      return 'done';
    });
    const env = new SimulatedToolEnv({ name: 'sim', dataset: [{ question: 'Where is PX-1009?' }, { question: 'Where is PX-1010?' }], simulator, rubric: new Rubric({ funcs: [function finishedReward() { return 1; }] }) });
    const result = await evaluate(env, policy, { rolloutsPerTask: 4, concurrency: 4 });
    const toolReplies = (task: number) => result.records.filter((record) => record.taskIndex === task).map((record) => record.completion.filter((message) => message.role === 'tool').map((message) => message.content));
    const first = toolReplies(0);
    expect(first).toHaveLength(4);
    for (const replies of first) expect(replies).toEqual(first[0]);
    expect(first[0]![0]).toBe(first[0]![1]);
    expect(first[0]![2]).not.toBe(first[0]![0]);
    // The other task is another episode key: a world of its own, asked afresh.
    expect(toolReplies(1)[0]![0]).not.toBe(first[0]![0]);
    expect(client.prompts).toHaveLength(4);
    // The second call of an episode sees the first one as a fact of the backend.
    expect(client.prompts.find((prompt) => prompt.includes('"query":"refunds"'))).toContain('Facts of this episode');
    expect(result.records.flatMap((record) => record.errors)).toEqual([]);
  });

  test('the cache keeps at most maxCachedGroups groups, never evicts one in flight, and a group keeps its results whatever the bound', async () => {
    const client = countingSimulator();
    const simulator = new ToolSimulator({ tools: TOOLS, records: RECORDS, client, maxCachedGroups: 2 });
    const policy = new ScriptedClient((messages: Message[]) => (messages.some((message) => message.role === 'tool') ? 'done' : callTool('track_parcel', { tracking_id: 'PX-1009' }, 'a')));
    const dataset = ['A', 'B', 'C', 'D', 'E'].map((name) => ({ question: `Parcel ${name}?` }));
    const env = new SimulatedToolEnv({ name: 'sim', dataset, simulator, rubric: new Rubric({ funcs: [function finishedReward() { return 1; }] }) });
    // Five groups of three, as GRPO runs them, with a simulator that answers every prompt differently.
    const result = await evaluate(env, policy, { rolloutsPerTask: 3, concurrency: 2 });
    for (let task = 0; task < dataset.length; task++) {
      const replies = result.records.filter((record) => record.taskIndex === task).map((record) => record.completion[1]!.content);
      expect(new Set(replies).size).toBe(1);
    }
    expect(client.prompts).toHaveLength(5);
    expect(simulator.cachedGroups()).toHaveLength(2);
    // An episode in flight pins its group while other groups come and go.
    const pinned = simulator.cachedGroups()[0]!;
    simulator.beginEpisode(pinned);
    for (const key of ['x', 'y', 'z']) {
      simulator.beginEpisode(key);
      simulator.endEpisode(key);
    }
    expect(simulator.cachedGroups()).toContain(pinned);
    simulator.endEpisode(pinned);
    simulator.beginEpisode('w');
    simulator.endEpisode('w');
    expect(simulator.cachedGroups()).not.toContain(pinned);
    expect(simulator.cachedGroups()).toHaveLength(2);
    // A task whose group was evicted is asked anew, as a later group of the same task would be.
    await evaluate(env, policy, { numTasks: 1, rolloutsPerTask: 2 });
    expect(client.prompts).toHaveLength(6);
  });

  test('a simulator that fails or answers garbage ends the rollout with the reason; it never answers the policy in its place', async () => {
    const refusing: ChatClient = { chat: { completions: { create: async () => { throw new ChatClientError('connection refused', 'network'); } } } };
    const garbage: ChatClient = { chat: { completions: { create: async (request) => ({ id: 'g', model: request.model, choices: [{ index: 0, message: { role: 'assistant', content: 'Sure! The parcel is fine.' }, finish_reason: 'stop' }] }) } } };
    for (const [client, reason] of [[refusing, 'the simulator model failed on track_parcel: connection refused'], [garbage, 'is not JSON, while the recorded results are']] as const) {
      const env = new SimulatedToolEnv({ name: 'sim', dataset: [{ question: 'Where is PX-1001?' }], simulator: new ToolSimulator({ tools: TOOLS, records: RECORDS, client }) });
      const trajectory = await env.rollout(new ScriptedClient([callTool('track_parcel', { tracking_id: 'PX-1001' }, 'a'), 'done']), env.dataset[0]!);
      expect(trajectory.completion.filter((message) => message.role === 'tool')).toEqual([]);
      expect(trajectory.stopReason).toBe('error');
      expect(trajectory.errors[0]!.message).toContain(reason);
    }
  });
});

describe('fidelity', () => {
  const heldOutCalls = Array.from({ length: 8 }, (_, i) => parcel(`PX-20${i}`, 'in transit'));
  /** A simulator right on exactly the calls in `right`; elsewhere it gets the status wrong (1 of 2 fields). */
  const rightOn = (right: Set<string>): ChatClient => ({ chat: { completions: { create: async (request) => {
    const id = /### Call track_parcel\n\{"tracking_id":"(PX-\d+)"\}\n### Result\n$/.exec(request.messages[0]!.content)![1]!;
    const content = JSON.stringify({ tracking_id: id, status: right.has(id) ? 'in transit' : 'delivered' });
    return { id: 'f', model: request.model, choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }] };
  } } } });
  const yesWhenEqual = new ScriptedClient((messages: Message[]) => {
    const [, real, simulated] = /Real result:\n(.*)\n\nSimulated result:\n(.*)\n/.exec(messages[0]!.content)!;
    return real === simulated ? 'Same facts. Verdict: yes' : 'The status differs. Verdict: no';
  });

  test('exact, field-by-field and judged shares are exact for a simulator right on a known share', async () => {
    const split = { pool: RECORDS, heldOut: heldOutCalls };
    const measured = await measureFidelity(split, [], { tools: TOOLS, client: rightOn(new Set(['PX-200', 'PX-201', 'PX-202', 'PX-203', 'PX-204', 'PX-205'])), judge: { client: yesWhenEqual } });
    expect(measured.rows).toEqual([{ tool: 'track_parcel', calls: 8, exact: 0.75, fields: (6 + 2 * 0.5) / 8, judged: 0.75, garbage: 0 }]);
    expect(measured.overall).toMatchObject({ tool: '*', calls: 8, exact: 0.75 });
    expect(measured.examples.filter((example) => !example.exact).map((example) => example.arguments.tracking_id)).toEqual(['PX-206', 'PX-207']);
  });

  test('field agreement counts leaf paths in either result; the held-out split is seeded, per tool, never the whole tool', () => {
    expect(fieldAgreement('{"a":1,"b":{"c":[1,2]}}', '{"b":{"c":[1,3]},"a":1}')).toBeCloseTo(2 / 3);
    expect(fieldAgreement('{"a":1}', '{"a":1,"extra":true}')).toBe(0.5);
    expect(fieldAgreement('plain text', 'plain text')).toBe(1);
    expect(fieldAgreement('{"a":1}', 'not json')).toBe(0);
    const split = splitHeldOut(RECORDS, 0.5, 7);
    expect(split.heldOut.filter((record) => record.tool === 'track_parcel')).toHaveLength(2);
    expect(split.heldOut.filter((record) => record.tool === 'search_notes')).toHaveLength(2);
    expect(split.pool.length + split.heldOut.length).toBe(RECORDS.length);
    expect(splitHeldOut(RECORDS, 0.5, 7)).toEqual(split);
    expect(splitHeldOut(RECORDS.slice(0, 1), 0.9, 0).heldOut).toEqual([]);
  });

  test('a simulator that fails stops the measurement with a SimulatorError', async () => {
    const refusing: ChatClient = { chat: { completions: { create: async () => { throw new ChatClientError('401 bad key', 'auth'); } } } };
    await expect(measureFidelity({ pool: RECORDS, heldOut: heldOutCalls }, [], { tools: TOOLS, client: refusing })).rejects.toThrow(SimulatorError);
  });
});
