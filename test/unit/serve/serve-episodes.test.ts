/**
 * Whole episodes over `tabrl serve`'s WebSocket, played as a remote trainer would (reset, then one
 * step per model turn), of reverse-text (single turn), wordle (multi-turn) and an environment file
 * with a ToolEnv (run in its own process): the final reward and scores must equal what `evaluate()`
 * gives for the same replies, and the observations must carry the conversation as the model sees it.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BUILTIN_ENVIRONMENTS } from '../../../src/envs/builtin/index.ts';
import { evaluate, ScriptedClient, type Environment, type Message, type ScriptedPolicy, type ScriptedReply, type Task } from '../../../src/envs/index.ts';
import { closeEnvironment, loadEnvironmentSpec } from '../../../src/cli/load-environment.ts';
import { writeEnvFile } from '../../support/tabrl-cli.ts';
import { adderEnvironmentSource, playEpisode, serveForTest, WireClient, type Reply } from '../../support/serve-wire.ts';

/** Plays one episode of task `taskIndex` in a session of its own, answering each observation with `policy`; returns every reply. */
async function playInNewSession(url: string, taskIndex: number, policy: (messages: Message[]) => Promise<Reply> | Reply): Promise<Reply[]> {
  const client = await WireClient.open(url);
  const replies = await playEpisode(client, { task_index: taskIndex }, policy);
  await client.close();
  return replies;
}

/** What evaluate() scores for one task when the model answers with `policy`. */
async function evaluateOne(env: Environment, task: Task, policy: ScriptedPolicy | readonly ScriptedReply[]) {
  const result = await evaluate(env, new ScriptedClient(policy), { tasks: [task], concurrency: 1 });
  return result.records[0]!;
}

describe('reverse-text over the wire', () => {
  let env: Environment;
  let server: Awaited<ReturnType<typeof serveForTest>>;
  beforeAll(async () => {
    env = await loadEnvironmentSpec('reverse-text');
    server = await serveForTest(env);
  });
  afterAll(() => server.close(100));

  test('a reset shows the prompt and the last step carries the rubric total, equal to evaluate() for the same replies', async () => {
    const expert = await BUILTIN_ENVIRONMENTS['reverse-text'].expert(env);
    for (const [taskIndex, reply] of [[0, undefined], [3, 'olleh'], [5, '<reversed>abc</reversed>']] as const) {
      const task = env.dataset[taskIndex]!;
      const replies = await playInNewSession(server.wsUrl, taskIndex, async (messages) => ({ message: reply ?? String(await expert(messages, { model: 'm', messages })) }));
      expect(replies.map((r) => r.type)).toEqual(['observation', 'observation']);
      const [first, last] = replies;
      expect(first.data).toMatchObject({ reward: null, done: false, terminated: false, truncated: false });
      expect(first.data.observation).toMatchObject({ task_index: taskIndex, split: 'train', turn: 0, prompt: task.question ?? env.formatPrompt(task).at(-1)!.content });
      expect(first.data.observation.messages).toEqual(env.formatPrompt(task));

      const record = await evaluateOne(env, task, (messages, request) => reply ?? expert(messages, request));
      expect(last.data.done).toBe(true);
      expect(last.data.reward).toBe(record.reward);
      expect({ ...last.data.observation.scores, ...last.data.observation.metrics }).toEqual(record.scores);
      expect(last.data.observation.messages).toEqual([...record.prompt, ...record.completion]);
      expect(last.data.terminated).toBe(!record.truncated);
    }
  });

  test('resets pick tasks by index, by seed (modulo the split size) or in order, from either split', async () => {
    const client = await WireClient.open(server.wsUrl);
    const bySeed = await client.request({ type: 'reset', data: { seed: env.dataset.length + 2 } });
    expect(bySeed.data.observation.task_index).toBe(2);
    const evalTask = await client.request({ type: 'reset', data: { task_index: 1, split: 'eval', seed: 9, prompt: 'a dataset column, ignored' } });
    expect(evalTask.data.observation).toMatchObject({ task_index: 1, split: 'eval' });
    expect(evalTask.data.observation.messages).toEqual(env.formatPrompt(env.evaluationTasks[1]!));
    const inOrder = [await client.request({ type: 'reset' }), await client.request({ type: 'reset', data: {} })].map((r) => r.data.observation.task_index);
    expect(inOrder[1]).toBe((inOrder[0] + 1) % env.dataset.length);
    const state = await client.request({ type: 'state' });
    expect(state).toMatchObject({ type: 'state', data: { step_count: 0, task_index: inOrder[1], split: 'train', done: false } });
    expect(typeof state.data.episode_id).toBe('string');
    await client.close();
  });
});

describe('wordle over the wire (multi-turn)', () => {
  let env: Environment;
  let server: Awaited<ReturnType<typeof serveForTest>>;
  beforeAll(async () => {
    env = await loadEnvironmentSpec('wordle');
    server = await serveForTest(env);
  });
  afterAll(() => server.close(100));

  test('each step shows the feedback as the new prompt; the expert and a fixed guesser get the rewards evaluate() gives them', async () => {
    const expert = await BUILTIN_ENVIRONMENTS.wordle.expert(env);
    const guesses = ['<guess>crane</guess>', '<guess>slate</guess>', 'no guess here', '<guess>pious</guess>'];
    for (const [taskIndex, script] of [[0, undefined], [1, guesses]] as const) {
      let turn = 0;
      const replies = await playInNewSession(server.wsUrl, taskIndex, async (messages) => ({ message: script ? script[Math.min(turn++, script.length - 1)]! : String(await expert(messages, { model: 'm', messages })) }));
      const record = await evaluateOne(env, env.dataset[taskIndex]!, script ?? expert);
      const last = replies.at(-1);
      expect(replies.length - 1).toBe(record.turns.length);
      expect(replies.slice(0, -1).every((r) => r.data.reward === null)).toBe(true);
      expect(last.data.reward).toBe(record.reward);
      expect({ ...last.data.observation.scores, ...last.data.observation.metrics }).toEqual(record.scores);
      expect(last.data.observation.messages).toEqual([...record.prompt, ...record.completion]);
      // After a step, `prompt` is the environment's reply: the user message that followed the guess.
      const second = replies[1].data.observation;
      expect(second.turn).toBe(1);
      expect(second.prompt).toBe(record.completion[1]!.content);
      expect(last.data.truncated).toBe(record.truncated);
    }
  });
});

const TOOL_ENV = adderEnvironmentSource([{ question: 'What is 2 + 3?', answer: '5' }, { question: 'What is 10 + 7?', answer: '17' }]);

describe('an environment file with a ToolEnv, in its own process', () => {
  let env: Environment;
  let server: Awaited<ReturnType<typeof serveForTest>>;
  beforeAll(async () => {
    env = await loadEnvironmentSpec(writeEnvFile(TOOL_ENV));
    server = await serveForTest(env);
  }, 60_000);
  afterAll(async () => {
    await server?.close(100);
    if (env) closeEnvironment(env);
  });

  test('a call_tool step runs the tool, and the final reward, scores and metrics equal evaluate() for the same replies', async () => {
    const client = await WireClient.open(server.wsUrl);
    const tools = await client.request({ type: 'mcp', data: { jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} } });
    expect(tools).toEqual({ type: 'mcp', data: { jsonrpc: '2.0', id: 7, result: { tools: [{ name: 'add', description: 'Adds two numbers.', input_schema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] } }] } } });

    const reset = await client.request({ type: 'reset', data: { task_index: 1 } });
    expect(reset.data.observation.tools.map((tool: Reply) => tool.function.name)).toEqual(['add']);
    const afterTool = await client.request({ type: 'step', data: { type: 'call_tool', tool_name: 'add', arguments: { a: 10, b: 7 } } });
    expect(afterTool.data).toMatchObject({ done: false, reward: null, observation: { prompt: '17', turn: 1 } });
    const toolMessage = afterTool.data.observation.messages.at(-1);
    expect(toolMessage).toMatchObject({ role: 'tool', content: '17', tool_call_id: afterTool.data.observation.messages.at(-2).tool_calls[0].id });
    const last = await client.request({ type: 'step', data: { message: '17' } });
    await client.close();

    const record = await evaluateOne(env, env.dataset[1]!, [{ tool_calls: [{ id: 'call_0_0', type: 'function', function: { name: 'add', arguments: '{"a":10,"b":7}' } }] }, '17']);
    expect(record.reward).toBe(1.5);
    expect(last.data).toMatchObject({ done: true, terminated: true, truncated: false, reward: record.reward });
    expect(last.data.observation.scores).toEqual({ correct: 1, usedTool: 1 });
    expect(last.data.observation.metrics).toEqual({ turns: 2 });
    expect(last.data.observation.messages).toEqual([...record.prompt, ...record.completion]);
  });

  test('OpenAI tool_calls beside the message work as well, and a wrong answer scores what evaluate() scores', async () => {
    const calls = [{ id: 'c1', type: 'function', function: { name: 'add', arguments: '{"a":2,"b":2}' } }];
    const replies = await playInNewSession(server.wsUrl, 0, (messages) => (messages.some((m) => m.role === 'tool') ? { message: '4' } : { message: 'let me add', tool_calls: calls }));
    const record = await evaluateOne(env, env.dataset[0]!, [{ content: 'let me add', tool_calls: calls as never }, '4']);
    expect(replies.at(-1).data.reward).toBe(record.reward);
    expect(record.reward).toBe(0.5);
  });
});
