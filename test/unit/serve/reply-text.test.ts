/**
 * The observation replies of `tabrl serve`, written field by field with a session's memo of the
 * messages it wrote last: the text must be exactly `JSON.stringify`'s, for real episodes (single-turn,
 * multi-turn, tools) and for what a memo could get wrong: a message that changes at a position it
 * remembers, a message with more than role and content, a conversation that shrinks, odd text.
 */
import { describe, expect, test } from 'vitest';
import { loadEnvironmentSpec } from '../../../src/cli/load-environment.ts';
import { ObservationReplyWriter } from '../../../src/cli/serve/reply-text.ts';
import { ServedEnvironment, ServeSession } from '../../../src/cli/serve/session.ts';
import type { StepResult } from '../../../src/cli/serve/wire.ts';
import type { Message } from '../../../src/envs/index.ts';

const stringified = (result: StepResult) => JSON.stringify({ type: 'observation', data: result });

/** An observation's fields in the order observation.ts writes them (the order of `Observation` in wire.ts), the order the writer assumes. */
const WIRE_ORDER = ['prompt', 'messages', 'tools', 'task_index', 'split', 'info', 'turn', 'scores', 'metrics', 'stop_reason', 'error'] as const;

/** A result over `messages`, with the optional fields given, its observation's fields in wire order. */
function turnResult(messages: Message[], extra: Partial<StepResult['observation']> = {}, ending: Partial<Omit<StepResult, 'observation'>> = {}): StepResult {
  const fields: Record<string, unknown> = { prompt: messages.at(-1)?.content ?? '', messages, task_index: 4, split: 'eval', turn: 1, ...extra };
  const observation = Object.fromEntries(WIRE_ORDER.filter((key) => key in fields).map((key) => [key, fields[key]])) as unknown as StepResult['observation'];
  return { observation, reward: null, done: false, terminated: false, truncated: false, ...ending };
}

describe('ObservationReplyWriter', () => {
  test('whole episodes of reverse-text and wordle, one writer per session across episodes: the text is JSON.stringify\'s', async () => {
    for (const [name, replies] of [
      ['reverse-text', ['<reversed>olleh</reversed>']],
      // Wordle ends at its 8th turn at the latest (its default maxTurns).
      ['wordle', ['<guess>crane</guess>', 'no guess', '<guess>slate</guess>', '<guess>pious</guess>', '<guess>crane</guess>', '<guess>xylyl</guess>', '<guess>mound</guess>', '<guess>crane</guess>']],
    ] as const) {
      const env = await loadEnvironmentSpec(name);
      const session = new ServeSession(new ServedEnvironment(env, 'train'));
      const writer = new ObservationReplyWriter();
      let written = 0;
      for (const taskIndex of [0, 1, 1, 2]) {
        let result = await session.reset({ task_index: taskIndex });
        expect(writer.write(result)).toBe(stringified(result));
        for (const reply of replies) {
          if (result.done) break;
          result = await session.step({ message: reply });
          expect(writer.write(result)).toBe(stringified(result));
          written += 1;
        }
        expect(result.done).toBe(true);
      }
      expect(written).toBeGreaterThanOrEqual(4);
    }
  });

  test('a memo never stands in for a message that changed, has more fields than role and content, or is gone', () => {
    const writer = new ObservationReplyWriter();
    const system: Message = { role: 'system', content: 'Answer in "quotes".\nTabs\tand ✓ and \u2028 and a lone \ud800 surrogate.' };
    const user: Message = { role: 'user', content: 'What is 2 + 3?' };
    const toolCall: Message = { role: 'assistant', content: '', tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'add', arguments: '{"a":2,"b":3}' } }] };
    const toolReply: Message = { role: 'tool', content: '5', tool_call_id: 'call_0' };
    const conversations: Message[][] = [
      [system, user],
      [system, user, toolCall, toolReply],
      // The same positions with other content, another role, and a field more.
      [system, { role: 'user', content: 'What is 10 + 7?' }, { role: 'user', content: '' }, { ...toolReply, content: '17' }],
      [system, { role: 'assistant', content: 'What is 10 + 7?' }],
      [{ ...system, name: 'rules' }, user],
      // Keys in another order: the same message, but JSON.stringify writes content first.
      [{ content: system.content, role: 'system' } as Message, user],
      [system],
      [],
      [system, user, { role: 'assistant', content: 'The sum is 5.' }],
    ];
    for (const messages of conversations) {
      const result = turnResult(structuredClone(messages));
      expect(writer.write(result)).toBe(stringified(result));
    }
  });

  test('the optional fields, a final reward, and numbers JSON cannot hold are written as JSON.stringify writes them', () => {
    const writer = new ObservationReplyWriter();
    const messages: Message[] = [{ role: 'user', content: 'Say hi.' }, { role: 'assistant', content: 'hi' }];
    const tools = [{ type: 'function' as const, function: { name: 'add', description: 'Adds.', parameters: { type: 'object', properties: { a: { type: 'number' } } } } }];
    const results: StepResult[] = [
      turnResult(messages, { tools, info: { answer: 'hi', nested: [1, null, 'x'] } }),
      turnResult(messages, { scores: { exact: 1 }, metrics: { length: 2 }, stop_reason: 'completed' }, { reward: 1.2000000000000002, done: true, terminated: true }),
      turnResult(messages, { scores: {}, metrics: {}, stop_reason: 'max_turns', error: 'reward exact: it threw' }, { reward: -0, done: true, truncated: true }),
      turnResult(messages, { scores: { broken: Number.NaN } }, { reward: Number.POSITIVE_INFINITY, done: true }),
      turnResult(messages, { info: undefined, tools: undefined, scores: undefined }),
    ];
    for (const result of results) expect(writer.write(result)).toBe(stringified(result));
  });
});
