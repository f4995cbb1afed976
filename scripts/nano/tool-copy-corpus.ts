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
 *   its tokens are copies.
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

/** The kinds of chat, and each one's share of the corpus when all are drawn. */
export const TOOL_COPY_KINDS = { echo: 0.3, argument: 0.3, write: 0.2, chain: 0.2 } as const;

/** One kind of chat. */
export type ToolCopyKind = keyof typeof TOOL_COPY_KINDS;

/** Draws a kind among `kinds`, in proportion to their shares. */
function drawKind(rng: Rng, kinds: readonly ToolCopyKind[]): ToolCopyKind {
  let left = rng.next() * kinds.reduce((sum, kind) => sum + TOOL_COPY_KINDS[kind], 0);
  for (const kind of kinds) if ((left -= TOOL_COPY_KINDS[kind]) < 0) return kind;
  return kinds[kinds.length - 1]!;
}

/** One chat of a kind drawn among `kinds` (default: all, in their shares). */
export function toolCopyChat(rng: Rng, kinds: readonly ToolCopyKind[] = Object.keys(TOOL_COPY_KINDS) as ToolCopyKind[]): ToolChat {
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
  if (kind === 'write') {
    const date = FIELDS.date!(rng);
    const question = `Move the date: for the ${key} listed for ${ownerKey} ${owner}, set date to ${date}. Reply "done" when it is done.`;
    const written = JSON.stringify({ [key]: id, ok: true, date });
    return toolChat(rng.shuffle([reader, lister, writer]), question, [...listed, ...called('call_2', writer, { [key]: id, date }, written)], 'done');
  }
  const question = rng.pick([`What is the ${field} for the ${key} listed for ${ownerKey} ${owner}? Reply with the value alone.`, `${ownerKey} ${owner}: the ${field} of their ${noun}?`]);
  return toolChat(rng.shuffle([reader, lister, writer]), question, [...listed, ...called('call_2', reader, { [key]: id }, record)], value);
}
