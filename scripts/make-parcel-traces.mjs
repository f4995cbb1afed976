/**
 * Writes docs/examples/parcel-desk-traces.jsonl: the trace log of a fictional parcel-tracking API
 * ("Parcelo") and its support agent, for the studio's tool simulation (docs, tests, benchmark). The
 * world (ten parcels, four customers) and the conversations are made here from a fixed seed, in the
 * three trace formats the studio reads (OpenAI logs with tools, request/response pairs, results.jsonl
 * lines), with one log cut off after a tool call and one broken line. Run: node scripts/make-parcel-traces.mjs
 */
import { writeFileSync } from 'node:fs';
import { seededRandom } from './seeded-random.mjs';

const next = seededRandom(28);
const pick = (list) => list[Math.floor(next() * list.length)];

const CUSTOMERS = ['ana.moreau', 'ben.okafor', 'chloe.lind', 'dev.patel'];
const STATUSES = ['in transit', 'out for delivery', 'delivered', 'held at depot'];
const PLACES = ['Lyon hub', 'Ghent depot', 'Porto hub', 'Basel depot', 'Turin hub'];
const PARCELS = Array.from({ length: 10 }, (_, i) => ({
  tracking_id: `PX-${1001 + i}`,
  status: STATUSES[i % 4],
  location: PLACES[i % 5],
  eta: `2026-03-${String(10 + i).padStart(2, '0')}`,
  customer: CUSTOMERS[i % 4],
}));

const TOOLS = [
  { type: 'function', function: { name: 'track_parcel', description: 'Current status, location and expected delivery date of a parcel.', parameters: { type: 'object', properties: { tracking_id: { type: 'string', description: 'PX-NNNN' } }, required: ['tracking_id'] } } },
  { type: 'function', function: { name: 'find_parcels', description: "A customer's parcels.", parameters: { type: 'object', properties: { customer: { type: 'string', description: 'the customer login' } }, required: ['customer'] } } },
  { type: 'function', function: { name: 'reschedule_delivery', description: 'Moves the delivery of a parcel to another date.', parameters: { type: 'object', properties: { tracking_id: { type: 'string' }, date: { type: 'string', description: 'YYYY-MM-DD' } }, required: ['tracking_id', 'date'] } } },
];
const SYSTEM = { role: 'system', content: 'You are the Parcelo support agent. Use the tools to look things up; answer in one or two sentences.' };

const track = (p) => JSON.stringify({ tracking_id: p.tracking_id, status: p.status, location: p.location, eta: p.eta });
const find = (customer) => JSON.stringify({ customer, parcels: PARCELS.filter((p) => p.customer === customer).map((p) => ({ tracking_id: p.tracking_id, status: p.status })) });
const reschedule = (p, date) => (p.status === 'delivered' ? JSON.stringify({ tracking_id: p.tracking_id, ok: false, error: 'already delivered' }) : JSON.stringify({ tracking_id: p.tracking_id, ok: true, eta: date }));

/** One conversation: the user's question, the calls with their results, the final answer (null: the log stops after the calls). */
function conversation(i) {
  const kind = i % 10 < 6 ? 'track' : i % 10 < 8 ? 'find' : 'reschedule';
  if (kind === 'track') {
    const p = pick(PARCELS);
    return { question: pick([`Where is my parcel ${p.tracking_id}?`, `Any news on ${p.tracking_id}?`, `When will ${p.tracking_id} arrive?`]), calls: [['track_parcel', { tracking_id: p.tracking_id }, track(p)]], answer: `${p.tracking_id} is ${p.status} at the ${p.location}; expected on ${p.eta}.` };
  }
  if (kind === 'find') {
    const customer = pick(CUSTOMERS);
    const ids = PARCELS.filter((p) => p.customer === customer).map((p) => p.tracking_id);
    return { question: `I am ${customer}. Which parcels do I have with you?`, calls: [['find_parcels', { customer }, find(customer)]], answer: `You have ${ids.length} parcels: ${ids.join(', ')}.` };
  }
  const p = pick(PARCELS);
  const date = `2026-03-${String(20 + Math.floor(next() * 8)).padStart(2, '0')}`;
  const result = reschedule(p, date);
  return { question: `Please deliver ${p.tracking_id} on ${date} instead.`, calls: [['reschedule_delivery', { tracking_id: p.tracking_id, date }, result]], answer: JSON.parse(result).ok ? `Done: ${p.tracking_id} will now arrive on ${date}.` : `${p.tracking_id} was already delivered, so it cannot be moved.` };
}

/** The conversation as one trace line in format `format` (0: OpenAI log, 1: request/response, 2: results.jsonl). */
function traceLine(c, i, format) {
  const calls = c.calls.map(([name, args], j) => ({ id: `call_${i}_${j}`, type: 'function', function: { name, arguments: JSON.stringify(args) } }));
  const toolTurn = [{ role: 'assistant', content: null, tool_calls: calls }, ...c.calls.map(([, , result], j) => ({ role: 'tool', tool_call_id: `call_${i}_${j}`, content: result }))];
  const final = c.answer === null ? [] : [{ role: 'assistant', content: c.answer }];
  const user = { role: 'user', content: c.question };
  if (format === 0) return { messages: [SYSTEM, user, ...toolTurn, ...final], tools: TOOLS };
  if (format === 1) return { request: { model: 'parcelo-agent', tools: TOOLS, messages: [SYSTEM, user, ...toolTurn] }, response: c.answer === null ? undefined : { choices: [{ index: 0, message: final[0], finish_reason: 'stop' }] } };
  return { prompt: [SYSTEM, user], completion: [...toolTurn, ...final], reward: 1 };
}

const lines = [];
for (let i = 0; i < 48; i++) lines.push(JSON.stringify(traceLine(conversation(i), i, i % 3)));
// Questions the agent answered without a tool.
lines.push(JSON.stringify({ messages: [SYSTEM, { role: 'user', content: 'What are your opening hours?' }, { role: 'assistant', content: 'Our support desk is open 8:00 to 18:00, Monday to Saturday.' }] }));
lines.push(JSON.stringify({ messages: [SYSTEM, { role: 'user', content: 'Do you deliver on Sundays?' }, { role: 'assistant', content: 'No, Parcelo does not deliver on Sundays.' }] }));
// A log cut off after the tool call: a task without a reference.
lines.push(JSON.stringify(traceLine({ question: 'Status of PX-1002, please.', calls: [['track_parcel', { tracking_id: 'PX-1002' }, track(PARCELS[1])]], answer: null }, 48, 0)));
// A broken line: a tool message that answers no call.
lines.push(JSON.stringify({ messages: [SYSTEM, { role: 'user', content: 'Where is PX-1003?' }, { role: 'tool', tool_call_id: 'call_lost', content: track(PARCELS[2]) }, { role: 'assistant', content: 'It is in Porto.' }] }));
writeFileSync(new URL('../docs/examples/parcel-desk-traces.jsonl', import.meta.url), `${lines.join('\n')}\n`);
console.log(`wrote ${lines.length} lines to docs/examples/parcel-desk-traces.jsonl`);
