// scripts/nano/tool-copy-corpus.ts: the pretraining chats that teach carrying a value from where it is
// read to where it is used. Each kind appears; every call's arguments are copied from the question or
// an earlier tool result, every call has its tool turn, the tools called are the tools listed, and the
// final reply is the value the last result holds. Seeded: the same seed gives the same chats.
import { describe, expect, test } from 'vitest';
import type { Message } from '../../../src/envs/index.ts';
import { createRng } from '../../../src/envs/builtin/random.ts';
import { TOOL_COPY_KINDS, toolCopyChat, type ToolChat, type ToolCopyKind } from '../../../scripts/nano/tool-copy-corpus.ts';

const chats: ToolChat[] = Array.from({ length: 400 }, (_, i) => toolCopyChat(createRng(i)));
const ALL_KINDS = Object.keys(TOOL_COPY_KINDS) as ToolCopyKind[];
/** Chats of every kind, the opt-in ones (fields, read-write) included. */
const allChats: ToolChat[] = Array.from({ length: 600 }, (_, i) => toolCopyChat(createRng(10_000 + i), ALL_KINDS));

/** The fields of a record a tool returned, by name. */
const fieldsOf = (message: Message): Record<string, string> => JSON.parse(message.content) as Record<string, string>;

/** The kind of a chat, read from its shape (fields and read-write chats only when the record holds more than one field). */
function kindOf(chat: ToolChat): string {
  const calls = chat.messages.filter((message) => message.tool_calls !== undefined).length;
  if (calls === 0) return 'echo';
  if (calls === 3) return 'read-write';
  if (chat.messages.at(-1)!.content === 'done') return 'write';
  const fields = Object.keys(fieldsOf(chat.messages.at(-2)!)).length;
  if (fields > 2) return 'fields';
  return calls === 1 ? 'argument' : 'chain';
}

describe('tool-copy pretraining chats', () => {
  test('every kind appears, the opt-in ones only when asked for, and a seed gives the same chats again', () => {
    expect(new Set(chats.map(kindOf))).toEqual(new Set(['echo', 'argument', 'chain', 'write']));
    expect(new Set(allChats.map(kindOf))).toEqual(new Set(ALL_KINDS));
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
    for (const chat of [...chats, ...allChats]) {
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
    for (const chat of [...chats, ...allChats]) {
      const reply = chat.messages.at(-1)!;
      expect(reply.role).toBe('assistant');
      const kind = kindOf(chat);
      if (kind === 'echo') expect(chat.messages[0]!.content).toContain(reply.content);
      else if (kind !== 'write' && kind !== 'read-write') expect(Object.values(JSON.parse(chat.messages.at(-2)!.content) as Record<string, string>)).toContain(reply.content);
    }
  });

  test('a fields chat answers the field the question names, among three or four, wherever it sits in the record', () => {
    const fieldChats = allChats.filter((chat) => kindOf(chat) === 'fields');
    expect(fieldChats.length).toBeGreaterThan(50);
    let notLast = 0;
    for (const chat of fieldChats) {
      const record = fieldsOf(chat.messages.at(-2)!);
      const question = chat.messages.find((message) => message.role === 'user')!.content;
      // "What is the X for …", "…: which X?", "Give the X of …", "…: the X of their …"
      const asked = /(?:What is the|: which|Give the|: the) (\w+)/.exec(question)![1]!;
      expect(Object.keys(record).length).toBeGreaterThanOrEqual(3);
      expect(Object.keys(record)).toContain(asked);
      expect(chat.messages.at(-1)!.content).toBe(record[asked]);
      if (Object.keys(record).at(-1) !== asked) notLast++;
    }
    expect(notLast / fieldChats.length).toBeGreaterThan(0.4); // the answer is often not the record's last value
  });

  test("a read-write chat writes the question's date, not the date the record it read holds", () => {
    const writes = allChats.filter((chat) => kindOf(chat) === 'read-write');
    expect(writes.length).toBeGreaterThan(30);
    for (const chat of writes) {
      const question = chat.messages.find((message) => message.role === 'user')!.content;
      const read = fieldsOf(chat.messages[5]!); // listing call, its result, read call, its result
      const written = JSON.parse(chat.messages.at(-3)!.tool_calls![0]!.function.arguments) as { date: string };
      expect(question).toContain(`set date to ${written.date}`);
      expect(read.date).toMatch(/^2026-\d\d-\d\d$/);
      expect(read.date).not.toBe(written.date);
    }
  });
});
