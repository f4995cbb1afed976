import { describe, expect, test } from 'vitest';
import { defineTool, Rubric, ScriptedClient, ToolEnv, type RewardContext, type ToolState } from '../../../src/envs/index.ts';

const add = defineTool<{ a: number; b: number }>({
  name: 'add',
  description: 'Adds two numbers.',
  parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  run: ({ a, b }) => a + b,
});
const fail = defineTool({
  name: 'fail',
  description: 'Always fails.',
  parameters: { type: 'object', properties: {} },
  run: () => {
    throw new Error('the service is down');
  },
});
const usedToolsReward = (ctx: RewardContext<ToolState>) => ctx.state.toolCalls;
const env = new ToolEnv({ name: 'tools', dataset: [{ question: '2+3?', answer: '5' }], tools: [add, fail], rubric: new Rubric<ToolState>({ funcs: [usedToolsReward] }) });
const call = (name: string, args: string, id = 'c1') => ({ tool_calls: [{ id, type: 'function' as const, function: { name, arguments: args } }] });

describe('ToolEnv', () => {
  test('sends tool schemas, runs native tool calls and returns the results', async () => {
    const client = new ScriptedClient([call('add', '{"a": 2, "b": 3}'), 'The answer is 5.']);
    const trajectory = await env.rollout(client, env.dataset[0]!);
    expect(client.requests[0]!.tools!.map((tool) => tool.function.name)).toEqual(['add', 'fail']);
    expect(trajectory.completion[1]).toEqual({ role: 'tool', tool_call_id: 'c1', name: 'add', content: '5' });
    expect(trajectory.completion.at(-1)).toEqual({ role: 'assistant', content: 'The answer is 5.' });
    expect(trajectory.stopReason).toBe('completed');
    expect(trajectory.state).toMatchObject({ toolCalls: 1, toolErrors: 0 });
    expect(trajectory.reward).toBe(1);
  });

  test('a throwing tool, bad JSON, a missing argument and an unknown tool answer the model with errors', async () => {
    const client = new ScriptedClient([
      call('fail', '{}'),
      call('add', '{"a": 1,'),
      call('add', '{"a": 1}'),
      call('multiply', '{}'),
      'done',
    ]);
    const trajectory = await env.rollout(client, env.dataset[0]!);
    const toolReplies = trajectory.completion.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(toolReplies[0]).toBe('Error: the service is down');
    expect(toolReplies[1]).toMatch(/^Error: the arguments of add are not valid JSON/);
    expect(toolReplies[2]).toBe('Error: add is missing required argument(s): b.');
    expect(toolReplies[3]).toBe('Error: unknown tool "multiply". Available tools: add, fail.');
    expect(trajectory.state).toMatchObject({ toolCalls: 4, toolErrors: 4 });
    expect(trajectory.errors).toEqual([]);
  });

  test('reads <tool_call> blocks from text for models without native tool calling', async () => {
    const client = new ScriptedClient(['<tool_call>{"name": "add", "arguments": {"a": 40, "b": 2}}</tool_call>', '42']);
    const trajectory = await env.rollout(client, env.dataset[0]!);
    expect(trajectory.completion[1]).toMatchObject({ role: 'tool', name: 'add', content: '42' });
  });

  test('rejects two tools with one name', () => {
    expect(() => new ToolEnv({ name: 't', dataset: [], tools: [add, add] })).toThrow('two tools are named "add"');
  });
});
