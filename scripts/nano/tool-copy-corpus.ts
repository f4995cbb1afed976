/**
 * Tool-use chats for pretraining: the skill an agent needs before RL can teach it anything on a tool
 * it cannot call, carrying a value from where it was read to where it is used. Three kinds, each a
 * chat in the harness's format (the tool list in the system turn, `<tool_call>` blocks, tool
 * results as tool turns), made up from seeded random parts:
 *
 * - `argument`: the question names an identifier; the agent calls a tool with it, then answers with a
 *   field of the result;
 * - `chain`: the question names an owner; a listing returns an identifier, which the next call takes;
 * - `write`: as a chain, but the next call writes a date the question names to the listed identifier;
 * - `echo`: "Repeat …" one to four values, said back in order: short, with no tool list, so most of
 *   its tokens are copies;
 * - `fields`: as `argument` (or, half the time, `chain`), but the record holds three or four fields in
 *   a random order and the question names one: the answer is that field's value, not the last one;
 * - `read-write`: a listing, a read of the listed record (which holds a date of its own), then a
 *   write of the date the question names: copied from the question, past two tool results.
 *
 * The first four are the default (what nano-tools was pretrained on, so its recorded command still
 * makes it); `fields` and `read-write` are drawn only when asked for (`--copy-kinds`).
 *
 * The tools, keys, identifiers and values are generic (invented nouns, prefixes and names), never a
 * lesson's, so a model pretrained on them learns to copy, not any environment's answers.
 */
import type { Message, ToolSchema } from '../../src/envs/index.ts';
import type { Rng } from '../../src/envs/builtin/random.ts';

/** A chat for the pretraining corpus: its messages and the tools its system turn lists. */
export interface ToolChat {
  messages: Message[];
  tools: ToolSchema[];
}

const NOUNS = ['order', 'ticket', 'invoice', 'booking', 'device', 'account', 'shipment', 'claim', 'room', 'flight', 'patient', 'loan', 'meter', 'case', 'badge', 'vehicle'];
const VERBS = ['get', 'lookup', 'fetch', 'check', 'read', 'show'];
const LIST_VERBS = ['list', 'search', 'find'];
const OWNERS = ['user', 'client', 'member', 'owner', 'holder'];
const FIRST = ['mia', 'omar', 'lena', 'kofi', 'ines', 'tariq', 'yuki', 'noah', 'sara', 'ivan', 'zoe', 'amir', 'lucia', 'femi', 'hana', 'paul'];
const LAST = ['berg', 'diaz', 'ito', 'mensah', 'novak', 'rossi', 'silva', 'tan', 'weber', 'khan', 'lopez', 'moreno', 'park', 'quinn', 'sato', 'vogel'];
const FIELDS: Record<string, (rng: Rng) => string> = {
  status: (rng) => rng.pick(['open', 'closed', 'pending', 'on hold', 'in transit', 'approved', 'rejected']),
  city: (rng) => `${rng.pick(['Lyon', 'Oslo', 'Porto', 'Graz', 'Leeds', 'Bari', 'Lodz', 'Turku', 'Cork', 'Split', 'Brno', 'Nice'])} ${rng.pick(['office', 'depot', 'hub', 'centre', 'branch'])}`,
  date: (rng) => `2026-${String(rng.int(1, 12)).padStart(2, '0')}-${String(rng.int(1, 28)).padStart(2, '0')}`,
  amount: (rng) => `${rng.int(1, 999)}.${String(rng.int(0, 99)).padStart(2, '0')}`,
  owner: (rng) => login(rng),
};

/** An identifier like `QK-40721`: two or three capitals, a dash, three to five digits. */
function identifier(rng: Rng): string {
  const letters = Array.from({ length: rng.int(2, 3) }, () => String.fromCharCode(65 + rng.int(0, 25))).join('');
  const digits = Array.from({ length: rng.int(3, 5) }, () => String(rng.int(0, 9))).join('');
  return `${letters}-${digits}`;
}

/** A login like `lena.novak-318`. */
function login(rng: Rng): string {
  return `${rng.pick(FIRST)}.${rng.pick(LAST)}-${rng.int(100, 999)}`;
}

function tool(name: string, description: string, ...keys: string[]): ToolSchema {
  const properties = Object.fromEntries(keys.map((key) => [key, { type: 'string' }]));
  return { type: 'function', function: { name, description, parameters: { type: 'object', properties, required: keys } } };
}

const SYSTEM: Message = { role: 'system', content: 'You are an agent with tools. Use them to look up what you need, then reply with the value alone.' };

/** A call of `tool` with `args`, and the tool turn that answers it with `result`. */
function called(id: string, tool: ToolSchema, args: Record<string, string>, result: string): Message[] {
  return [
    { role: 'assistant', content: '', tool_calls: [{ id, type: 'function', function: { name: tool.function.name, arguments: JSON.stringify(args) } }] },
    { role: 'tool', tool_call_id: id, content: result },
  ];
}

/** A whole chat: the system turn, the question, the tool turns, the reply. */
function toolChat(tools: ToolSchema[], question: string, turns: Message[], reply: string): ToolChat {
  return { tools, messages: [SYSTEM, { role: 'user', content: question }, ...turns, { role: 'assistant', content: reply }] };
}

/** The kinds of chat, and each one's share of the corpus among the kinds drawn. */
export const TOOL_COPY_KINDS = { echo: 0.3, argument: 0.3, write: 0.2, chain: 0.2, fields: 0.3, 'read-write': 0.2 } as const;

/** One kind of chat. */
export type ToolCopyKind = keyof typeof TOOL_COPY_KINDS;

/** The kinds drawn when none are named: the first four (nano-tools' corpus). */
export const DEFAULT_TOOL_COPY_KINDS: readonly ToolCopyKind[] = ['echo', 'argument', 'write', 'chain'];

/** Draws a kind among `kinds`, in proportion to their shares. */
function drawKind(rng: Rng, kinds: readonly ToolCopyKind[]): ToolCopyKind {
  let left = rng.next() * kinds.reduce((sum, kind) => sum + TOOL_COPY_KINDS[kind], 0);
  for (const kind of kinds) if ((left -= TOOL_COPY_KINDS[kind]) < 0) return kind;
  return kinds[kinds.length - 1]!;
}

/** One chat of a kind drawn among `kinds` (default: DEFAULT_TOOL_COPY_KINDS, in their shares). */
export function toolCopyChat(rng: Rng, kinds: readonly ToolCopyKind[] = DEFAULT_TOOL_COPY_KINDS): ToolChat {
  if (kinds.length === 0) throw new Error('toolCopyChat: no kind to draw');
  const noun = rng.pick(NOUNS);
  const key = rng.pick([`${noun}_id`, 'id', `${noun}_ref`, 'ref']);
  const ownerKey = rng.pick(OWNERS);
  const reader = tool(`${rng.pick(VERBS)}_${noun}`, `Details of one ${noun}.`, key);
  const lister = tool(`${rng.pick(LIST_VERBS)}_${noun}s`, `A ${ownerKey}'s ${noun}s.`, ownerKey);
  const writer = tool(`${rng.pick(['set', 'update', 'change'])}_${noun}_date`, `Moves the date of one ${noun}.`, key, 'date');
  const id = identifier(rng);
  const field = rng.pick(Object.keys(FIELDS));
  const value = FIELDS[field]!(rng);
  const kind = drawKind(rng, kinds);
  if (kind === 'echo') {
    // Short and dense: one to four values to say back in order, no tool list (the copying itself).
    const values = Array.from({ length: rng.int(1, 4) }, () => rng.pick([identifier, login, FIELDS.date!])(rng));
    const question = `${rng.pick(['Repeat', 'Say back', 'Copy'])}: ${values.join(' ')}`;
    return {
      tools: [],
      messages: [
        { role: 'user', content: question },
        { role: 'assistant', content: values.join(' ') },
      ],
    };
  }
  const record = JSON.stringify({ [key]: id, [field]: value });
  if (kind === 'argument') {
    const question = rng.pick([`What is the ${field} for ${key} ${id}? Reply with the value alone.`, `${id}: which ${field}?`, `Give the ${field} of ${noun} ${id}.`]);
    return toolChat(rng.shuffle([reader, lister, writer]), question, called('call_1', reader, { [key]: id }, record), value);
  }
  const owner = login(rng);
  const listing = JSON.stringify({ [ownerKey]: owner, [`${noun}s`]: [{ [key]: id, status: FIELDS.status!(rng) }] });
  const listed = called('call_1', lister, { [ownerKey]: owner }, listing);
  if (kind === 'fields') return fieldsChat(rng, { noun, key, ownerKey, owner, id, reader, tools: rng.shuffle([reader, lister, writer]), listed });
  if (kind === 'read-write') {
    const full = recordWithFields(rng, key, id, ['date', ...rng.shuffle(Object.keys(FIELDS).filter((name) => name !== 'date')).slice(0, rng.int(1, 2))]);
    let date = FIELDS.date!(rng);
    while (date === full.values.date) date = FIELDS.date!(rng);
    const question = `Move the date: for the ${key} listed for ${ownerKey} ${owner}, set date to ${date}. Reply "done" when it is done.`;
    const written = JSON.stringify({ [key]: id, ok: true, date });
    const turns = [...listed, ...called('call_2', reader, { [key]: id }, full.json), ...called('call_3', writer, { [key]: id, date }, written)];
    return toolChat(rng.shuffle([reader, lister, writer]), question, turns, 'done');
  }
  if (kind === 'write') {
    const date = FIELDS.date!(rng);
    const question = `Move the date: for the ${key} listed for ${ownerKey} ${owner}, set date to ${date}. Reply "done" when it is done.`;
    const written = JSON.stringify({ [key]: id, ok: true, date });
    return toolChat(rng.shuffle([reader, lister, writer]), question, [...listed, ...called('call_2', writer, { [key]: id, date }, written)], 'done');
  }
  const question = rng.pick([`What is the ${field} for the ${key} listed for ${ownerKey} ${owner}? Reply with the value alone.`, `${ownerKey} ${owner}: the ${field} of their ${noun}?`]);
  return toolChat(rng.shuffle([reader, lister, writer]), question, [...listed, ...called('call_2', reader, { [key]: id }, record)], value);
}

/** A record of `key: id` and the named fields, in a random order, with a drawn value for each: its JSON and the values by field. */
function recordWithFields(rng: Rng, key: string, id: string, fields: string[]): { json: string; values: Record<string, string> } {
  const values = Object.fromEntries(fields.map((name) => [name, FIELDS[name]!(rng)]));
  const entries = rng.shuffle([[key, id] as [string, string], ...Object.entries(values)]);
  return { json: JSON.stringify(Object.fromEntries(entries)), values };
}

/** A `fields` chat: a record of three or four fields (the question names one) read by the question's identifier or, half the time, the listed one. */
function fieldsChat(rng: Rng, parts: { noun: string; key: string; ownerKey: string; owner: string; id: string; reader: ToolSchema; tools: ToolSchema[]; listed: Message[] }): ToolChat {
  const { noun, key, ownerKey, owner, id, reader, tools, listed } = parts;
  const full = recordWithFields(rng, key, id, rng.shuffle(Object.keys(FIELDS)).slice(0, rng.int(2, 3)));
  const asked = rng.pick(Object.keys(full.values));
  const read = called(rng.next() < 0.5 ? 'call_2' : 'call_1', reader, { [key]: id }, full.json);
  if (read[0]!.tool_calls![0]!.id === 'call_1') {
    const question = rng.pick([`What is the ${asked} for ${key} ${id}? Reply with the value alone.`, `${id}: which ${asked}?`, `Give the ${asked} of ${noun} ${id}.`]);
    return toolChat(tools, question, read, full.values[asked]!);
  }
  const question = rng.pick([`What is the ${asked} for the ${key} listed for ${ownerKey} ${owner}? Reply with the value alone.`, `${ownerKey} ${owner}: the ${asked} of their ${noun}?`]);
  return toolChat(tools, question, [...listed, ...read], full.values[asked]!);
}
