import { describe, expect, test } from 'vitest';
import { ScriptedClient, evaluate, type Message, type ScriptedReply, type Task, type ToolState } from '../../../../src/envs/index.ts';
import loadCalculator, { calculatorExpertPolicy, calculatorTool } from '../../../../src/envs/builtin/calculator.ts';
import { evaluateExpression, formatRational } from '../../../../src/envs/builtin/expression.ts';

const env = loadCalculator({ numTasks: 30, numEvalTasks: 20 });
const task: Task = { question: 'Use the calculator to work out: 4821 * 37 - 2906', answer: '175471', info: { expression: '4821 * 37 - 2906' } };
const call = (args: unknown, name = 'calculator', id = 'call_1'): ScriptedReply => ({
  content: '',
  tool_calls: [{ id, type: 'function', function: { name, arguments: typeof args === 'string' ? args : JSON.stringify(args) } }],
});
const toolReplies = (completion: Message[]) => completion.filter((message) => message.role === 'tool').map((message) => message.content);

describe('calculator environment', () => {
  test('offers the calculator tool with its JSON schema', async () => {
    const client = new ScriptedClient(['<answer>1</answer>']);
    await env.rollout(client, task);
    expect(client.requests[0]!.tools).toEqual([{ type: 'function', function: { name: 'calculator', description: calculatorTool.description, parameters: calculatorTool.parameters } }]);
  });

  test('a tool call, its result, then the answer: full marks', async () => {
    const trajectory = await env.rollout(new ScriptedClient([call({ expression: '4821 * 37 - 2906' }), '<answer>175,471</answer>']), task);
    expect(toolReplies(trajectory.completion)).toEqual(['175471']);
    expect(trajectory.scores).toEqual({ correctAnswerReward: 1, toolUseReward: 1, toolErrorsMetric: 0 });
    expect(trajectory.reward).toBeCloseTo(1.2, 12);
    expect(trajectory.stopReason).toBe('completed');
  });

  test('tool errors (division by zero, a name, a non-string argument, an unknown tool) go back to the model and are counted', async () => {
    const trajectory = await env.rollout(
      new ScriptedClient([
        call({ expression: '1 / (2 - 2)' }),
        call({ expression: 'constructor' }),
        call({ expression: 42 }),
        call({ expression: '2 + 2' }, 'python'),
        '<answer>175471</answer>', // never asked for: the turn limit (4) comes first
      ]),
      task,
    );
    expect(toolReplies(trajectory.completion)).toEqual([
      'Error: division by zero',
      'Error: "constructor" at position 1 is not allowed: only numbers, + - * / and parentheses',
      'Error: "expression" must be a string, got 42',
      'Error: unknown tool "python". Available tools: calculator.',
    ]);
    const state = trajectory.state as ToolState;
    expect(state.toolCalls).toBe(4);
    expect(state.toolErrors).toBe(4);
    expect(trajectory.scores).toEqual({ correctAnswerReward: 0, toolUseReward: 1, toolErrorsMetric: 4 });
    expect(trajectory.stopReason).toBe('max_turns');
  });

  test('the model recovers after a failed call within the turn limit', async () => {
    const trajectory = await env.rollout(new ScriptedClient([call({ expression: '4821 x 37' }), call({ expression: '4821 * 37 - 2906' }), '<answer>175471</answer>']), task);
    expect(toolReplies(trajectory.completion)[0]).toMatch(/^Error: "x" at position 6 is not allowed/);
    expect(trajectory.scores).toEqual({ correctAnswerReward: 1, toolUseReward: 1, toolErrorsMetric: 1 });
  });

  test('answering without the tool earns no tool-use reward', async () => {
    const trajectory = await env.rollout(new ScriptedClient(['<answer>175471</answer>']), task);
    expect(trajectory.scores).toEqual({ correctAnswerReward: 1, toolUseReward: 0, toolErrorsMetric: 0 });
  });

  test('tasks: the stored answer is the expression\'s exact whole-number value', () => {
    for (const difficulty of [1, 2, 3, 4, 5]) {
      for (const t of loadCalculator({ numTasks: 100, numEvalTasks: 5, difficulty }).dataset) {
        const expression = (t.info as { expression: string }).expression;
        expect(t.question).toBe(`Use the calculator to work out: ${expression}`);
        expect(formatRational(evaluateExpression(expression).value)).toBe(t.answer);
        expect(expression.match(/[-+*/]/g)).toHaveLength(difficulty);
      }
    }
  });

  test.each(['native', 'text'] as const)('the expert (%s tool calls) solves 20 held-out tasks', async (toolCallStyle) => {
    const result = await evaluate(env, new ScriptedClient(calculatorExpertPolicy({ toolCallStyle })), { numTasks: 20 });
    expect(result.summary.passRate).toBe(1);
    expect(result.summary.scores.toolUseReward).toBe(1);
    expect(result.summary.scores.toolErrorsMetric).toBe(0);
    const first = result.records[0]!.completion[0]!;
    expect(toolCallStyle === 'native' ? first.tool_calls?.length : first.content.startsWith('<tool_call>')).toBeTruthy();
  });
});
