/**
 * The environment file `tabrl simulate`, `tasks from-traces` and `synth --backwards` write (and the
 * Studio tab opens), compiled as the playground compiles a file ('tabrl' and 'tabrl/studio' its only imports) and run:
 * its tools answer the planted call with the planted record, its reward passes the planted answer
 * and fails the value in the traces, and the "judge" simulator uses the lent model, which it asks
 * once per call for a whole group.
 */
import ts from 'typescript';
import { describe, expect, test } from 'vitest';
import * as tabrl from '../../../../src/envs/index.ts';
import { evaluate, ScriptedClient, type ChatClient, type ChatRequest, type Environment, type Message } from '../../../../src/envs/index.ts';
import * as tabrlStudio from '../../../../src/envs/studio/index.ts';
import { simulatedEnvironmentFile } from '../../../../src/envs/studio/index.ts';

function loadSource(source: string, args: Record<string, unknown> = {}): Environment {
  const { outputText } = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: false } });
  const module = { exports: {} as Record<string, unknown> };
  const require = (name: string) => {
    if (name === 'tabrl') return tabrl;
    if (name === 'tabrl/studio') return tabrlStudio;
    throw new Error(`unexpected import ${name}`);
  };
  new Function('module', 'exports', 'require', outputText)(module, module.exports, require);
  return (module.exports.default as (args: Record<string, unknown>) => Environment)(args);
}

const TOOLS = [{ type: 'function' as const, function: { name: 'track', description: "a parcel's status", parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } } }];
const RECORDS = [{ tool: 'track', arguments: { id: 'PX-1' }, result: '{"id":"PX-1","status":"late"}' }];
const PLANTED = { tool: 'track', arguments: { id: 'PX-9' }, result: '{"id":"PX-9","status":"lost"}' };
const FILE = simulatedEnvironmentFile({ name: 'planted', tasks: [{ prompt: [{ role: 'user', content: 'What is the status for id PX-9?' }], answer: 'lost', info: { planted: [PLANTED] } }], tools: TOOLS, records: RECORDS, scoring: 'exact' });

/** Calls `track` for `id`, then answers with the status it read, or with `fixed` when given. */
const tracker = (id: string, fixed?: string) =>
  new ScriptedClient((messages: Message[]) => {
    const last = messages.at(-1)!;
    if (last.role === 'tool') return `Answer: ${fixed ?? (JSON.parse(last.content) as { status: string }).status}`;
    return { tool_calls: [{ id: 'c', type: 'function', function: { name: 'track', arguments: JSON.stringify({ id }) } }] };
  });

describe('the simulated-tool environment file', () => {
  test('rewards the planted answer read from the planted call, and fails the value in the traces', async () => {
    const env = loadSource(FILE);
    const right = await evaluate(env, tracker('PX-9'), { rolloutsPerTask: 2 });
    expect(right.records.map((record) => [record.scores.exactMatchReward, record.scores.usedToolsMetric])).toEqual([[1, 1], [1, 1]]);
    expect(right.records[0]!.completion[1]).toMatchObject({ role: 'tool', content: PLANTED.result });
    const traced = await evaluate(env, tracker('PX-1'), { rolloutsPerTask: 1 });
    expect(traced.records[0]!.scores.exactMatchReward).toBe(0);
    const guessed = await evaluate(env, new ScriptedClient(['Answer: late']), { rolloutsPerTask: 1 });
    expect(guessed.records[0]!.scores).toEqual({ exactMatchReward: 0, usedToolsMetric: 0 });
  });

  test('the "judge" simulator is the lent model, asked once per call for a whole group; without one the file says what to add', async () => {
    const prompts: string[] = [];
    const lent: ChatClient = { chat: { completions: { create: async (request: ChatRequest) => {
      prompts.push(request.messages[0]!.content);
      return { id: 's', model: request.model, choices: [{ index: 0, message: { role: 'assistant', content: '{"id":"PX-5","status":"sorted"}' }, finish_reason: 'stop' }] };
    } } } };
    const env = loadSource(FILE, { simulator: 'judge', judgeClient: lent, judgeModel: 'sim' });
    const result = await evaluate(env, tracker('PX-5'), { rolloutsPerTask: 4, concurrency: 4 });
    expect(result.records.map((record) => record.completion[1]!.content)).toEqual(Array(4).fill('{"id":"PX-5","status":"sorted"}'));
    expect(prompts).toHaveLength(1);
    expect(prompts[0]).toContain('{"id":"PX-1","status":"late"}');
    expect(() => loadSource(FILE, { simulator: 'judge' })).toThrow('add --judge-base-url URL --judge-model NAME');
    expect(() => loadSource(FILE, { simulator: 'oracle' })).toThrow('simulator should be "scripted", "simulator" or "judge"');
  });
});
