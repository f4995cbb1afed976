// scripts/nano/tool-copy-corpus.ts: the pretraining chats that teach carrying a value from where it is
// read to where it is used. Each kind appears; every call's arguments are copied from the question or
// an earlier tool result, every call has its tool turn, the tools called are the tools listed, and the
// final reply is the value the last result holds. Seeded: the same seed gives the same chats.
import { describe, expect, test } from 'vitest';
import type { Message } from '../../../src/envs/index.ts';
import { createRng } from '../../../src/envs/builtin/random.ts';
import { toolCopyChat, type ToolChat } from '../../../scripts/nano/tool-copy-corpus.ts';

const chats: ToolChat[] = Array.from({ length: 400 }, (_, i) => toolCopyChat(createRng(i)));

/** The kind of a chat, read from its shape. */
function kindOf(chat: ToolChat): string {
  const calls = chat.messages.filter((message) => message.tool_calls !== undefined).length;
  if (calls === 0) return 'echo';
  if (calls === 1) return 'argument';
  return chat.messages.at(-1)!.content === 'done' ? 'write' : 'chain';
}

describe('tool-copy pretraining chats', () => {
  test('every kind appears, and a seed gives the same chats again', () => {
    expect(new Set(chats.map(kindOf))).toEqual(new Set(['echo', 'argument', 'chain', 'write']));
    expect(toolCopyChat(createRng(7))).toEqual(toolCopyChat(createRng(7)));
    expect(toolCopyChat(createRng(7))).not.toEqual(toolCopyChat(createRng(8)));
  });

  test('the kinds drawn can be chosen, and none is refused', () => {
    const rng = createRng(3);
    const echoes = Array.from({ length: 50 }, () => toolCopyChat(rng, ['echo']));
    expect(new Set(echoes.map(kindOf))).toEqual(new Set(['echo']));
    expect(new Set(Array.from({ length: 80 }, () => kindOf(toolCopyChat(rng, ['chain', 'write']))))).toEqual(new Set(['chain', 'write']));
    expect(() => toolCopyChat(rng, [])).toThrow(/no kind/);
  });

  test("each call's arguments are copied from the question or an earlier tool result, and each call is answered", () => {
    for (const chat of chats) {
      const names = chat.tools.map((tool) => tool.function.name);
      const seen: string[] = [chat.messages.find((message) => message.role === 'user')!.content];
      chat.messages.forEach((message: Message, index) => {
        if (message.role === 'tool') seen.push(message.content);
        for (const call of message.tool_calls ?? []) {
          expect(names).toContain(call.function.name);
          for (const value of Object.values(JSON.parse(call.function.arguments) as Record<string, string>)) expect(seen.some((text) => text.includes(value))).toBe(true);
          expect(chat.messages[index + 1]).toMatchObject({ role: 'tool', tool_call_id: call.id });
        }
      });
    }
  });

  test('the final reply is the value read: the identifier for an echo, the field of the last result otherwise', () => {
    for (const chat of chats) {
      const reply = chat.messages.at(-1)!;
      expect(reply.role).toBe('assistant');
      const kind = kindOf(chat);
      if (kind === 'echo') expect(chat.messages[0]!.content).toContain(reply.content);
      else if (kind !== 'write') expect(Object.values(JSON.parse(chat.messages.at(-2)!.content) as Record<string, string>)).toContain(reply.content);
    }
  });
});
