import { describe, expect, test } from 'vitest';
import { evaluate, OpenAIHttpClient, Rubric, type Message, type RewardContext } from '../../../../src/envs/index.ts';
import { ScriptedSimulatorClient, SimulatedToolEnv, tasksFromTraces, ToolSimulator } from '../../../../src/envs/studio/index.ts';
import { startFakeOpenAIServer } from '../../../support/fake-openai-server.ts';
import { strictRequestProblem, toolCallBody } from '../../../support/strict-openai-validation.ts';

const TRACK_SCHEMA = { type: 'function', function: { name: 'track_parcel', description: 'Status of a parcel', parameters: { type: 'object', properties: { tracking_id: { type: 'string' } }, required: ['tracking_id'] } } };
const call = (id: string, args: Record<string, unknown>, name = 'track_parcel') => ({ id, type: 'function', function: { name, arguments: JSON.stringify(args) } });
const SYSTEM = { role: 'system', content: 'You are the Parcelo support agent.' };
const RESULT_1001 = '{"tracking_id":"PX-1001","status":"in transit","location":"Lyon hub"}';

/** One conversation with a tool call, written in each trace format the docs list. */
const FORMATS: Record<string, unknown> = {
  'OpenAI log with tools': {
    messages: [SYSTEM, { role: 'user', content: 'Where is PX-1001?' }, { role: 'assistant', content: null, tool_calls: [call('c1', { tracking_id: 'PX-1001' })] }, { role: 'tool', tool_call_id: 'c1', content: RESULT_1001 }, { role: 'assistant', content: 'It is at the Lyon hub, in transit.' }],
    tools: [TRACK_SCHEMA],
  },
  'request/response pair': {
    request: { model: 'm', tools: [TRACK_SCHEMA], messages: [SYSTEM, { role: 'user', content: 'Where is PX-1001?' }, { role: 'assistant', content: '', tool_calls: [call('c1', { tracking_id: 'PX-1001' })] }, { role: 'tool', tool_call_id: 'c1', content: RESULT_1001 }] },
    response: { choices: [{ message: { role: 'assistant', content: 'It is at the Lyon hub, in transit.' } }] },
  },
  'results.jsonl line': {
    prompt: [SYSTEM, { role: 'user', content: 'Where is PX-1001?' }],
    completion: [{ role: 'assistant', content: '', tool_calls: [call('c1', { tracking_id: 'PX-1001' })] }, { role: 'tool', tool_call_id: 'c1', content: RESULT_1001 }, { role: 'assistant', content: 'It is at the Lyon hub, in transit.' }],
    reward: 1,
  },
};

describe('tasksFromTraces keeps the structure of tool-using traces', () => {
  test.each(Object.entries(FORMATS))('%s: system prompt, tool calls, tool_call_ids, tools; the reference is the final answer', (_format, line) => {
    const parsed = tasksFromTraces(JSON.stringify(line));
    expect(parsed.skipped).toEqual([]);
    const [task] = parsed.tasks;
    expect(task!.prompt).toEqual([SYSTEM, { role: 'user', content: 'Where is PX-1001?' }]);
    expect(task!.info).toMatchObject({ reference: 'It is at the Lyon hub, in transit.', toolCalls: 1, tools: ['track_parcel'] });
    expect(parsed.records).toEqual([{ tool: 'track_parcel', arguments: { tracking_id: 'PX-1001' }, result: RESULT_1001, line: 1 }]);
    expect(parsed.tools.map((tool) => tool.function.name)).toEqual(['track_parcel']);
    expect(parsed.tools[0]!.function.parameters).toMatchObject({ properties: { tracking_id: { type: 'string' } }, required: ['tracking_id'] });
  });

  test('earlier tool turns stay in the prompt with their ids; a last turn that is a tool call gives no reference; broken pairings are skipped by line', () => {
    const lines = [
      { messages: [SYSTEM, { role: 'user', content: 'Where is PX-1001?' }, { role: 'assistant', content: null, tool_calls: [call('a', { tracking_id: 'PX-1001' })] }, { role: 'tool', tool_call_id: 'a', content: RESULT_1001 }, { role: 'assistant', content: 'In Lyon.' }, { role: 'user', content: 'And when does it arrive?' }, { role: 'assistant', content: 'Tomorrow.' }], tools: [TRACK_SCHEMA] },
      { messages: [{ role: 'user', content: 'Track PX-1002' }, { role: 'assistant', content: null, tool_calls: [call('b', { tracking_id: 'PX-1002' })] }] },
      { messages: [{ role: 'user', content: 'Track PX-1003' }, { role: 'tool', tool_call_id: 'zzz', content: '{}' }] },
      { messages: [{ role: 'user', content: 'Track PX-1004' }, { role: 'assistant', content: null, tool_calls: [call('d', { tracking_id: 'PX-1004' })] }, { role: 'assistant', content: 'Done' }] },
      { messages: [{ role: 'user', content: 'Track PX-1005' }, { role: 'tool', content: '{}' }] },
    ];
    const parsed = tasksFromTraces(lines.map((line) => JSON.stringify(line)).join('\n'));
    const [multiTurn, unanswered] = parsed.tasks;
    expect(multiTurn!.prompt[2]).toEqual({ role: 'assistant', content: '', tool_calls: [call('a', { tracking_id: 'PX-1001' })] });
    expect(multiTurn!.prompt[3]).toEqual({ role: 'tool', tool_call_id: 'a', content: RESULT_1001 });
    expect(multiTurn!.prompt.at(-1)).toEqual({ role: 'user', content: 'And when does it arrive?' });
    expect(multiTurn!.info.reference).toBe('Tomorrow.');
    expect(multiTurn!.info.toolCalls).toBe(0);
    expect(unanswered!.info.reference).toBeNull();
    expect(unanswered!.info.toolCalls).toBe(1);
    expect(parsed.skipped.map((skip) => [skip.line, skip.reason])).toEqual([
      [3, 'message 1 is a tool message whose tool_call_id "zzz" answers no call of the assistant message before it'],
      [4, 'the tool call(s) d before message 2 are never answered by a tool message'],
      [5, 'messages[1] is a tool message without a tool_call_id (the id of the call it answers)'],
    ]);
    for (const task of parsed.tasks) expect(strictRequestProblem({ model: 'm', messages: task.prompt, tools: parsed.tools })).toBeUndefined();
  });

  test('a tool without a logged schema gets one inferred from its calls', () => {
    const parsed = tasksFromTraces(JSON.stringify({ prompt: [{ role: 'user', content: 'Move PX-1001 to Friday' }], completion: [{ role: 'assistant', content: '', tool_calls: [call('r', { tracking_id: 'PX-1001', day: 'friday', attempts: 2 }, 'reschedule')] }, { role: 'tool', tool_call_id: 'r', content: '{"ok":true}' }, { role: 'assistant', content: 'Moved.' }] }));
    expect(parsed.tools[0]!.function).toMatchObject({ name: 'reschedule', parameters: { type: 'object', properties: { tracking_id: { type: 'string' }, day: { type: 'string' }, attempts: { type: 'integer' } }, required: ['tracking_id', 'day', 'attempts'] } });
  });
});

describe('rollouts of trace tasks with tools', () => {
  test('are valid for a strict OpenAI-style server: tool calls answered by id, tools declared, earlier tool turns kept', async () => {
    const parsed = tasksFromTraces([
      JSON.stringify(FORMATS['OpenAI log with tools']),
      JSON.stringify({ messages: [SYSTEM, { role: 'user', content: 'Where is PX-1001?' }, { role: 'assistant', content: null, tool_calls: [call('a', { tracking_id: 'PX-1001' })] }, { role: 'tool', tool_call_id: 'a', content: RESULT_1001 }, { role: 'assistant', content: 'In Lyon.' }, { role: 'user', content: 'Is it still in transit?' }, { role: 'assistant', content: 'Yes.' }], tools: [TRACK_SCHEMA] }),
    ].join('\n'));
    const refused: string[] = [];
    const server = await startFakeOpenAIServer((messages, request, index) => {
      const problem = strictRequestProblem(request);
      if (problem) {
        refused.push(problem);
        return { status: 400, body: { error: { message: problem, type: 'invalid_request_error' } } };
      }
      // First turn of each rollout: call the tool; then answer from its result.
      if (messages.at(-1)!.role === 'user') return { status: 200, body: toolCallBody(request.model, `call_${index}`, 'track_parcel', { tracking_id: 'PX-1001' }) };
      return `From the tracker: ${JSON.parse(messages.at(-1)!.content).location}, in transit.`;
    });
    try {
      const simulator = new ToolSimulator({ tools: parsed.tools, records: parsed.records, client: new ScriptedSimulatorClient() });
      const mentionsLyon = (ctx: RewardContext) => (ctx.completion.at(-1)?.content.includes('Lyon') ? 1 : 0);
      const env = new SimulatedToolEnv({ name: 'traces', dataset: parsed.tasks, simulator, rubric: new Rubric({ funcs: [mentionsLyon] }) });
      const result = await evaluate(env, new OpenAIHttpClient({ baseURL: server.baseURL, maxRetries: 0 }), { rolloutsPerTask: 2, concurrency: 2 });
      expect(refused).toEqual([]);
      expect(result.records.flatMap((record) => record.errors)).toEqual([]);
      expect(result.records.map((record) => record.reward)).toEqual([1, 1, 1, 1]);
      expect(server.requests).toHaveLength(8);
      const second = server.requests.find((request) => request.messages.length > 3 && request.messages.at(-1)!.role === 'tool')!;
      expect(second.tools?.map((tool) => tool.function.name)).toEqual(['track_parcel']);
      // The validator refuses what from-traces used to write: a tool call flattened to text, a tool message without its id.
      const flattened: Message[] = [{ role: 'user', content: 'Where is PX-1001?' }, { role: 'assistant', content: '' }, { role: 'tool', content: RESULT_1001 }, { role: 'user', content: 'And?' }];
      expect(strictRequestProblem({ model: 'm', messages: flattened })).toMatch(/needs content or tool_calls/);
    } finally {
      await server.close();
    }
  });
});
