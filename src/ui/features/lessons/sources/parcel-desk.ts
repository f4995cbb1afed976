/**
 * Lesson 7: an agent for a tool you cannot call. Parcelo is a fictional parcel-tracking API whose
 * support agent's conversations were logged (docs/examples/parcel-desk-traces.jsonl, the sample
 * trace log of the Studio tab). Its three tools cannot be called here, so they are simulated: each
 * call is answered from the recorded calls (RECORDS) by the scripted nearest-record simulator, or
 * with `simulator: "judge"` by the model the tab lends as the judge. The tasks were planted
 * backwards: the end state first — a parcel's field, a parcel reached through a customer's listing
 * (two calls), or a rescheduled delivery (a write) — planted in the simulated backend
 * (`info.planted`), then the question. Made by plantBackwardsTasks(records, 6, 0) over the log
 * (`tabrl synth --backwards docs/examples/parcel-desk-traces.jsonl --tasks 6`); a unit test checks
 * these tables against it.
 *
 * Scoring: `exactMatchReward` (weight 1), 1 when the final answer is the planted one;
 * `reachedStateReward` (weight 1), for a write, 1 when the state the episode reached holds the goal
 * (`info.goal`); `usedToolsMetric` (weight 0), 1 when the policy called a tool. Passing = reward 1.
 */
import { Rubric, completionText, type ChatClient, type RewardContext, type Task, type ToolSchema } from '../../../../envs/index.ts';
import { reachedStateReward, ScriptedSimulatorClient, SimulatedToolEnv, ToolSimulator, answersMatch, type ToolRecord } from '../../../../envs/studio/index.ts';

/** The planted tasks: two of each kind (a field, a chain of two calls, a write). */
export const TASKS: Task[] = [
  {
    prompt: [
      { role: 'system', content: 'You are an agent with tools. Use them to look up what you need, then reply with the value alone.' },
      { role: 'user', content: 'What is the location for tracking_id PX-6587? Reply with the value alone.' },
    ],
    answer: 'Basel depot',
    info: {
      planted: [{ tool: 'track_parcel', arguments: { tracking_id: 'PX-6587' }, result: '{"tracking_id":"PX-6587","status":"out for delivery","location":"Basel depot","eta":"2026-03-11"}' }],
      field: 'location',
      plantedId: 0,
      kind: 'field',
    },
  },
  {
    prompt: [
      { role: 'system', content: 'You are an agent with tools. Use them to look up what you need, then reply with the value alone.' },
      { role: 'user', content: 'What is the location for the tracking_id listed for customer ben.okafor-496? Reply with the value alone.' },
    ],
    answer: 'Ghent depot',
    info: {
      planted: [
        { tool: 'find_parcels', arguments: { customer: 'ben.okafor-496' }, result: '{"customer":"ben.okafor-496","parcels":[{"tracking_id":"PX-0921","status":"out for delivery"}]}' },
        { tool: 'track_parcel', arguments: { tracking_id: 'PX-0921' }, result: '{"tracking_id":"PX-0921","status":"out for delivery","location":"Ghent depot","eta":"2026-03-19"}' },
      ],
      field: 'location',
      plantedId: 1,
      kind: 'chain',
    },
  },
  {
    prompt: [
      { role: 'system', content: 'You are an agent with tools. Use them to look up what you need, then reply with the value alone.' },
      { role: 'user', content: 'Reschedule delivery: for the tracking_id listed for customer ben.okafor-379, set date to 2026-03-25. Reply "done" when it is done.' },
    ],
    info: {
      planted: [
        { tool: 'find_parcels', arguments: { customer: 'ben.okafor-379' }, result: '{"customer":"ben.okafor-379","parcels":[{"tracking_id":"PX-9078","status":"out for delivery"}]}' },
        { tool: 'track_parcel', arguments: { tracking_id: 'PX-9078' }, result: '{"tracking_id":"PX-9078","status":"out for delivery","location":"Turin hub","eta":"2026-03-19"}' },
        { tool: 'reschedule_delivery', arguments: { tracking_id: 'PX-9078', date: '2026-03-25' }, result: '{"tracking_id":"PX-9078","ok":true,"eta":"2026-03-25"}' },
      ],
      field: 'date',
      plantedId: 2,
      kind: 'write',
      goal: { tool: 'reschedule_delivery', arguments: { tracking_id: 'PX-9078', date: '2026-03-25' } },
    },
  },
  {
    prompt: [
      { role: 'system', content: 'You are an agent with tools. Use them to look up what you need, then reply with the value alone.' },
      { role: 'user', content: 'What is the eta for the tracking_id listed for customer ana.moreau-469? Reply with the value alone.' },
    ],
    answer: '2026-03-16',
    info: {
      planted: [
        { tool: 'find_parcels', arguments: { customer: 'ana.moreau-469' }, result: '{"customer":"ana.moreau-469","parcels":[{"tracking_id":"PX-3456","status":"in transit"}]}' },
        { tool: 'track_parcel', arguments: { tracking_id: 'PX-3456' }, result: '{"tracking_id":"PX-3456","status":"in transit","location":"Basel depot","eta":"2026-03-16"}' },
      ],
      field: 'eta',
      plantedId: 3,
      kind: 'chain',
    },
  },
  {
    prompt: [
      { role: 'system', content: 'You are an agent with tools. Use them to look up what you need, then reply with the value alone.' },
      { role: 'user', content: 'Reschedule delivery: for the tracking_id listed for customer ana.moreau-596, set date to 2026-03-25. Reply "done" when it is done.' },
    ],
    info: {
      planted: [
        { tool: 'find_parcels', arguments: { customer: 'ana.moreau-596' }, result: '{"customer":"ana.moreau-596","parcels":[{"tracking_id":"PX-8709","status":"in transit"}]}' },
        { tool: 'track_parcel', arguments: { tracking_id: 'PX-8709' }, result: '{"tracking_id":"PX-8709","status":"in transit","location":"Turin hub","eta":"2026-03-14"}' },
        { tool: 'reschedule_delivery', arguments: { tracking_id: 'PX-8709', date: '2026-03-25' }, result: '{"tracking_id":"PX-8709","ok":true,"eta":"2026-03-25"}' },
      ],
      field: 'date',
      plantedId: 4,
      kind: 'write',
      goal: { tool: 'reschedule_delivery', arguments: { tracking_id: 'PX-8709', date: '2026-03-25' } },
    },
  },
  {
    prompt: [
      { role: 'system', content: 'You are an agent with tools. Use them to look up what you need, then reply with the value alone.' },
      { role: 'user', content: 'What is the location for tracking_id PX-4321? Reply with the value alone.' },
    ],
    answer: 'Turin hub',
    info: {
      planted: [{ tool: 'track_parcel', arguments: { tracking_id: 'PX-4321' }, result: '{"tracking_id":"PX-4321","status":"held at depot","location":"Turin hub","eta":"2026-03-17"}' }],
      field: 'location',
      plantedId: 5,
      kind: 'field',
    },
  },
];

/** Parcelo's tools, as the traces logged them. */
export const TOOLS: ToolSchema[] = [
  {
    type: 'function',
    function: {
      name: 'track_parcel',
      description: 'Current status, location and expected delivery date of a parcel.',
      parameters: { type: 'object', properties: { tracking_id: { type: 'string', description: 'PX-NNNN' } }, required: ['tracking_id'] },
    },
  },
  {
    type: 'function',
    function: {
      name: 'find_parcels',
      description: "A customer's parcels.",
      parameters: { type: 'object', properties: { customer: { type: 'string', description: 'the customer login' } }, required: ['customer'] },
    },
  },
  {
    type: 'function',
    function: {
      name: 'reschedule_delivery',
      description: 'Moves the delivery of a parcel to another date.',
      parameters: { type: 'object', properties: { tracking_id: { type: 'string' }, date: { type: 'string', description: 'YYYY-MM-DD' } }, required: ['tracking_id', 'date'] },
    },
  },
];

/** The recorded calls the simulator retrieves from. */
export const RECORDS: ToolRecord[] = [
  { tool: 'track_parcel', arguments: { tracking_id: 'PX-1005' }, result: '{"tracking_id":"PX-1005","status":"in transit","location":"Turin hub","eta":"2026-03-14"}' },
  { tool: 'track_parcel', arguments: { tracking_id: 'PX-1008' }, result: '{"tracking_id":"PX-1008","status":"held at depot","location":"Porto hub","eta":"2026-03-17"}' },
  { tool: 'track_parcel', arguments: { tracking_id: 'PX-1003' }, result: '{"tracking_id":"PX-1003","status":"delivered","location":"Porto hub","eta":"2026-03-12"}' },
  { tool: 'track_parcel', arguments: { tracking_id: 'PX-1005' }, result: '{"tracking_id":"PX-1005","status":"in transit","location":"Turin hub","eta":"2026-03-14"}' },
  { tool: 'track_parcel', arguments: { tracking_id: 'PX-1010' }, result: '{"tracking_id":"PX-1010","status":"out for delivery","location":"Turin hub","eta":"2026-03-19"}' },
  { tool: 'track_parcel', arguments: { tracking_id: 'PX-1010' }, result: '{"tracking_id":"PX-1010","status":"out for delivery","location":"Turin hub","eta":"2026-03-19"}' },
  {
    tool: 'find_parcels',
    arguments: { customer: 'dev.patel' },
    result: '{"customer":"dev.patel","parcels":[{"tracking_id":"PX-1004","status":"held at depot"},{"tracking_id":"PX-1008","status":"held at depot"}]}',
  },
  {
    tool: 'find_parcels',
    arguments: { customer: 'ana.moreau' },
    result: '{"customer":"ana.moreau","parcels":[{"tracking_id":"PX-1001","status":"in transit"},{"tracking_id":"PX-1005","status":"in transit"},{"tracking_id":"PX-1009","status":"in transit"}]}',
  },
  { tool: 'reschedule_delivery', arguments: { tracking_id: 'PX-1004', date: '2026-03-27' }, result: '{"tracking_id":"PX-1004","ok":true,"eta":"2026-03-27"}' },
  { tool: 'reschedule_delivery', arguments: { tracking_id: 'PX-1009', date: '2026-03-20' }, result: '{"tracking_id":"PX-1009","ok":true,"eta":"2026-03-20"}' },
  { tool: 'track_parcel', arguments: { tracking_id: 'PX-1003' }, result: '{"tracking_id":"PX-1003","status":"delivered","location":"Porto hub","eta":"2026-03-12"}' },
  { tool: 'track_parcel', arguments: { tracking_id: 'PX-1002' }, result: '{"tracking_id":"PX-1002","status":"out for delivery","location":"Ghent depot","eta":"2026-03-11"}' },
  { tool: 'track_parcel', arguments: { tracking_id: 'PX-1003' }, result: '{"tracking_id":"PX-1003","status":"delivered","location":"Porto hub","eta":"2026-03-12"}' },
  { tool: 'track_parcel', arguments: { tracking_id: 'PX-1009' }, result: '{"tracking_id":"PX-1009","status":"in transit","location":"Basel depot","eta":"2026-03-18"}' },
  { tool: 'track_parcel', arguments: { tracking_id: 'PX-1009' }, result: '{"tracking_id":"PX-1009","status":"in transit","location":"Basel depot","eta":"2026-03-18"}' },
  { tool: 'track_parcel', arguments: { tracking_id: 'PX-1008' }, result: '{"tracking_id":"PX-1008","status":"held at depot","location":"Porto hub","eta":"2026-03-17"}' },
  {
    tool: 'find_parcels',
    arguments: { customer: 'ana.moreau' },
    result: '{"customer":"ana.moreau","parcels":[{"tracking_id":"PX-1001","status":"in transit"},{"tracking_id":"PX-1005","status":"in transit"},{"tracking_id":"PX-1009","status":"in transit"}]}',
  },
  {
    tool: 'find_parcels',
    arguments: { customer: 'ben.okafor' },
    result:
      '{"customer":"ben.okafor","parcels":[{"tracking_id":"PX-1002","status":"out for delivery"},{"tracking_id":"PX-1006","status":"out for delivery"},{"tracking_id":"PX-1010","status":"out for delivery"}]}',
  },
  { tool: 'reschedule_delivery', arguments: { tracking_id: 'PX-1007', date: '2026-03-25' }, result: '{"tracking_id":"PX-1007","ok":false,"error":"already delivered"}' },
  { tool: 'reschedule_delivery', arguments: { tracking_id: 'PX-1001', date: '2026-03-27' }, result: '{"tracking_id":"PX-1001","ok":true,"eta":"2026-03-27"}' },
  { tool: 'track_parcel', arguments: { tracking_id: 'PX-1009' }, result: '{"tracking_id":"PX-1009","status":"in transit","location":"Basel depot","eta":"2026-03-18"}' },
  { tool: 'track_parcel', arguments: { tracking_id: 'PX-1008' }, result: '{"tracking_id":"PX-1008","status":"held at depot","location":"Porto hub","eta":"2026-03-17"}' },
  { tool: 'track_parcel', arguments: { tracking_id: 'PX-1004' }, result: '{"tracking_id":"PX-1004","status":"held at depot","location":"Basel depot","eta":"2026-03-13"}' },
  { tool: 'track_parcel', arguments: { tracking_id: 'PX-1007' }, result: '{"tracking_id":"PX-1007","status":"delivered","location":"Ghent depot","eta":"2026-03-16"}' },
  { tool: 'track_parcel', arguments: { tracking_id: 'PX-1008' }, result: '{"tracking_id":"PX-1008","status":"held at depot","location":"Porto hub","eta":"2026-03-17"}' },
  { tool: 'track_parcel', arguments: { tracking_id: 'PX-1003' }, result: '{"tracking_id":"PX-1003","status":"delivered","location":"Porto hub","eta":"2026-03-12"}' },
  {
    tool: 'find_parcels',
    arguments: { customer: 'ana.moreau' },
    result: '{"customer":"ana.moreau","parcels":[{"tracking_id":"PX-1001","status":"in transit"},{"tracking_id":"PX-1005","status":"in transit"},{"tracking_id":"PX-1009","status":"in transit"}]}',
  },
  {
    tool: 'find_parcels',
    arguments: { customer: 'ben.okafor' },
    result:
      '{"customer":"ben.okafor","parcels":[{"tracking_id":"PX-1002","status":"out for delivery"},{"tracking_id":"PX-1006","status":"out for delivery"},{"tracking_id":"PX-1010","status":"out for delivery"}]}',
  },
  { tool: 'reschedule_delivery', arguments: { tracking_id: 'PX-1008', date: '2026-03-22' }, result: '{"tracking_id":"PX-1008","ok":true,"eta":"2026-03-22"}' },
  { tool: 'reschedule_delivery', arguments: { tracking_id: 'PX-1006', date: '2026-03-23' }, result: '{"tracking_id":"PX-1006","ok":true,"eta":"2026-03-23"}' },
  { tool: 'track_parcel', arguments: { tracking_id: 'PX-1008' }, result: '{"tracking_id":"PX-1008","status":"held at depot","location":"Porto hub","eta":"2026-03-17"}' },
  { tool: 'track_parcel', arguments: { tracking_id: 'PX-1004' }, result: '{"tracking_id":"PX-1004","status":"held at depot","location":"Basel depot","eta":"2026-03-13"}' },
  { tool: 'track_parcel', arguments: { tracking_id: 'PX-1009' }, result: '{"tracking_id":"PX-1009","status":"in transit","location":"Basel depot","eta":"2026-03-18"}' },
  { tool: 'track_parcel', arguments: { tracking_id: 'PX-1010' }, result: '{"tracking_id":"PX-1010","status":"out for delivery","location":"Turin hub","eta":"2026-03-19"}' },
  { tool: 'track_parcel', arguments: { tracking_id: 'PX-1007' }, result: '{"tracking_id":"PX-1007","status":"delivered","location":"Ghent depot","eta":"2026-03-16"}' },
  { tool: 'track_parcel', arguments: { tracking_id: 'PX-1010' }, result: '{"tracking_id":"PX-1010","status":"out for delivery","location":"Turin hub","eta":"2026-03-19"}' },
  {
    tool: 'find_parcels',
    arguments: { customer: 'ana.moreau' },
    result: '{"customer":"ana.moreau","parcels":[{"tracking_id":"PX-1001","status":"in transit"},{"tracking_id":"PX-1005","status":"in transit"},{"tracking_id":"PX-1009","status":"in transit"}]}',
  },
  {
    tool: 'find_parcels',
    arguments: { customer: 'chloe.lind' },
    result: '{"customer":"chloe.lind","parcels":[{"tracking_id":"PX-1003","status":"delivered"},{"tracking_id":"PX-1007","status":"delivered"}]}',
  },
  { tool: 'reschedule_delivery', arguments: { tracking_id: 'PX-1008', date: '2026-03-22' }, result: '{"tracking_id":"PX-1008","ok":true,"eta":"2026-03-22"}' },
  { tool: 'reschedule_delivery', arguments: { tracking_id: 'PX-1005', date: '2026-03-27' }, result: '{"tracking_id":"PX-1005","ok":true,"eta":"2026-03-27"}' },
  { tool: 'track_parcel', arguments: { tracking_id: 'PX-1004' }, result: '{"tracking_id":"PX-1004","status":"held at depot","location":"Basel depot","eta":"2026-03-13"}' },
  { tool: 'track_parcel', arguments: { tracking_id: 'PX-1010' }, result: '{"tracking_id":"PX-1010","status":"out for delivery","location":"Turin hub","eta":"2026-03-19"}' },
  { tool: 'track_parcel', arguments: { tracking_id: 'PX-1006' }, result: '{"tracking_id":"PX-1006","status":"out for delivery","location":"Lyon hub","eta":"2026-03-15"}' },
  { tool: 'track_parcel', arguments: { tracking_id: 'PX-1002' }, result: '{"tracking_id":"PX-1002","status":"out for delivery","location":"Ghent depot","eta":"2026-03-11"}' },
  { tool: 'track_parcel', arguments: { tracking_id: 'PX-1010' }, result: '{"tracking_id":"PX-1010","status":"out for delivery","location":"Turin hub","eta":"2026-03-19"}' },
  { tool: 'track_parcel', arguments: { tracking_id: 'PX-1003' }, result: '{"tracking_id":"PX-1003","status":"delivered","location":"Porto hub","eta":"2026-03-12"}' },
  {
    tool: 'find_parcels',
    arguments: { customer: 'ana.moreau' },
    result: '{"customer":"ana.moreau","parcels":[{"tracking_id":"PX-1001","status":"in transit"},{"tracking_id":"PX-1005","status":"in transit"},{"tracking_id":"PX-1009","status":"in transit"}]}',
  },
  {
    tool: 'find_parcels',
    arguments: { customer: 'ana.moreau' },
    result: '{"customer":"ana.moreau","parcels":[{"tracking_id":"PX-1001","status":"in transit"},{"tracking_id":"PX-1005","status":"in transit"},{"tracking_id":"PX-1009","status":"in transit"}]}',
  },
  { tool: 'track_parcel', arguments: { tracking_id: 'PX-1002' }, result: '{"tracking_id":"PX-1002","status":"out for delivery","location":"Ghent depot","eta":"2026-03-11"}' },
];

/** What the tab lends: a judge, which simulates the tools with `simulator: "judge"`. */
export interface ParcelDeskArgs {
  judgeClient?: ChatClient;
  judgeModel?: string;
  /** "scripted" (offline nearest-record retrieval, the default) or "judge" (the lent judge simulates the tools). */
  simulator?: 'scripted' | 'judge';
}

/** 1 when the final answer matches the planted one after normalisation; 0 for a task without one (a write). */
export function exactMatchReward(ctx: RewardContext): number {
  return ctx.answer !== undefined && answersMatch(completionText(ctx.completion), ctx.answer) ? 1 : 0;
}

/** 1 when the policy called at least one tool. */
export function usedToolsMetric(ctx: RewardContext): number {
  return ctx.completion.some((message) => message.role === 'tool') ? 1 : 0;
}

/** Builds the environment over TASKS with Parcelo's simulated tools. */
export default function loadEnvironment(args: ParcelDeskArgs = {}) {
  const simulatorName = args.simulator ?? 'scripted';
  if (simulatorName !== 'scripted' && simulatorName !== 'judge') throw new Error(`simulator should be "scripted" or "judge", not ${JSON.stringify(simulatorName)}`);
  if (simulatorName === 'judge' && !args.judgeClient) throw new Error('simulator "judge" simulates the tools with the lent judge: pick a model in the Judge card');
  const client = simulatorName === 'judge' && args.judgeClient ? args.judgeClient : new ScriptedSimulatorClient();
  const simulator = new ToolSimulator({ tools: TOOLS, records: RECORDS, client, model: simulatorName === 'judge' ? args.judgeModel : 'scripted' });
  const rubric = new Rubric({
    rewards: [
      { fn: exactMatchReward, weight: 1 },
      { fn: reachedStateReward, weight: 1 },
      { fn: usedToolsMetric, weight: 0 },
    ],
  });
  return new SimulatedToolEnv({ name: 'parcel-desk', dataset: TASKS, simulator, rubric, maxTurns: 8 });
}
