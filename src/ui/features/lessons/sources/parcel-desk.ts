/**
 * Lesson 7: an agent for a tool you cannot call. Parcelo is a fictional parcel-tracking API whose
 * support agent's conversations were logged (docs/examples/parcel-desk-traces.jsonl, the sample
 * trace log of the Studio tab). Its three tools cannot be called here, so they are simulated: each
 * call is answered from the recorded calls (RECORDS) by the scripted nearest-record simulator, by
 * the simulator the tab or tabrl lends (`args.simulatorClient`: the Studio's simulator choice, or
 * `--simulator-*`), or with `simulator: "judge"` by the lent judge. A write (a reschedule) changes
 * what later reads of that parcel return. The tasks were planted backwards: the end state first — a
 * parcel's field, a parcel reached through a customer's listing (two calls), or a rescheduled
 * delivery (a write) — planted in the simulated backend (`info.planted`), then the question. Made by
 * plantBackwardsTasks(records, 80, 0) over the log, 32 tasks (all these records allow; `tabrl synth
 * --backwards docs/examples/parcel-desk-traces.jsonl --tasks 80` plants the same): the first 12 are
 * held out for evaluation (EVAL_TASKS), the warm-up and GRPO use the other 20 (TASKS) and 240 practice
 * tasks planted the same three ways with a fresh id drawn for each (PRACTICE_TASKS), so that copying
 * the id from the question is what works, not remembering ids. A planted task knows the calls that
 * reach its answer, so the warm-up's demonstrations are those calls, then the answer (the planted
 * tasks' reference paths). A unit test checks these tables against the log.
 *
 * Scoring: `exactMatchReward` (weight 1), 1 when the final answer is the planted one;
 * `reachedStateReward` (weight 1), for a write, 1 when the state the episode reached holds the goal
 * (`info.goal`); `firstCallReward` (weight 0.5), partial credit for the planted path's first call,
 * the right tool with the id the question names; `usedToolsMetric` (weight 0), 1 when the policy
 * called a tool. Passing = reward 1 (a solved task scores 1.5).
 */
import { Rubric, completionText, type ChatClient, type RewardContext, type Task, type ToolSchema } from '../../../../envs/index.ts';
import { canonicalJson, reachedStateReward, ScriptedSimulatorClient, SimulatedToolEnv, ToolSimulator, answersMatch, type ToolRecord } from '../../../../envs/studio/index.ts';

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

/** The held-out tasks evaluation uses: the first 12 planted, four of each kind (a field, a chain of two calls, a write, in turn). */
export const EVAL_TASKS: Task[] = [
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
  {
    prompt: [
      { role: 'system', content: 'You are an agent with tools. Use them to look up what you need, then reply with the value alone.' },
      { role: 'user', content: 'What is the location for the tracking_id listed for customer ana.moreau-438? Reply with the value alone.' },
    ],
    answer: 'Lyon hub',
    info: {
      planted: [
        { tool: 'find_parcels', arguments: { customer: 'ana.moreau-438' }, result: '{"customer":"ana.moreau-438","parcels":[{"tracking_id":"PX-2109","status":"in transit"}]}' },
        { tool: 'track_parcel', arguments: { tracking_id: 'PX-2109' }, result: '{"tracking_id":"PX-2109","status":"in transit","location":"Lyon hub","eta":"2026-03-18"}' },
      ],
      field: 'location',
      plantedId: 6,
      kind: 'chain',
    },
  },
  {
    prompt: [
      { role: 'system', content: 'You are an agent with tools. Use them to look up what you need, then reply with the value alone.' },
      { role: 'user', content: 'Reschedule delivery: for the tracking_id listed for customer ana.moreau-497, set date to 2026-03-27. Reply "done" when it is done.' },
    ],
    info: {
      planted: [
        { tool: 'find_parcels', arguments: { customer: 'ana.moreau-497' }, result: '{"customer":"ana.moreau-497","parcels":[{"tracking_id":"PX-5678","status":"in transit"}]}' },
        { tool: 'track_parcel', arguments: { tracking_id: 'PX-5678' }, result: '{"tracking_id":"PX-5678","status":"in transit","location":"Basel depot","eta":"2026-03-18"}' },
        { tool: 'reschedule_delivery', arguments: { tracking_id: 'PX-5678', date: '2026-03-27' }, result: '{"tracking_id":"PX-5678","ok":true,"eta":"2026-03-27"}' },
      ],
      field: 'date',
      plantedId: 7,
      kind: 'write',
      goal: { tool: 'reschedule_delivery', arguments: { tracking_id: 'PX-5678', date: '2026-03-27' } },
    },
  },
  {
    prompt: [
      { role: 'system', content: 'You are an agent with tools. Use them to look up what you need, then reply with the value alone.' },
      { role: 'user', content: 'What is the location for the tracking_id listed for customer chloe.lind-328? Reply with the value alone.' },
    ],
    answer: 'Porto hub',
    info: {
      planted: [
        { tool: 'find_parcels', arguments: { customer: 'chloe.lind-328' }, result: '{"customer":"chloe.lind-328","parcels":[{"tracking_id":"PX-4365","status":"delivered"}]}' },
        { tool: 'track_parcel', arguments: { tracking_id: 'PX-4365' }, result: '{"tracking_id":"PX-4365","status":"delivered","location":"Porto hub","eta":"2026-03-16"}' },
      ],
      field: 'location',
      plantedId: 8,
      kind: 'chain',
    },
  },
  {
    prompt: [
      { role: 'system', content: 'You are an agent with tools. Use them to look up what you need, then reply with the value alone.' },
      { role: 'user', content: 'Reschedule delivery: for the tracking_id listed for customer ana.moreau-329, set date to 2026-03-20. Reply "done" when it is done.' },
    ],
    info: {
      planted: [
        { tool: 'find_parcels', arguments: { customer: 'ana.moreau-329' }, result: '{"customer":"ana.moreau-329","parcels":[{"tracking_id":"PX-9012","status":"in transit"}]}' },
        { tool: 'track_parcel', arguments: { tracking_id: 'PX-9012' }, result: '{"tracking_id":"PX-9012","status":"in transit","location":"Basel depot","eta":"2026-03-18"}' },
        { tool: 'reschedule_delivery', arguments: { tracking_id: 'PX-9012', date: '2026-03-20' }, result: '{"tracking_id":"PX-9012","ok":true,"eta":"2026-03-20"}' },
      ],
      field: 'date',
      plantedId: 9,
      kind: 'write',
      goal: { tool: 'reschedule_delivery', arguments: { tracking_id: 'PX-9012', date: '2026-03-20' } },
    },
  },
  {
    prompt: [
      { role: 'system', content: 'You are an agent with tools. Use them to look up what you need, then reply with the value alone.' },
      { role: 'user', content: 'What is the eta for tracking_id PX-1290? Reply with the value alone.' },
    ],
    answer: '2026-03-15',
    info: {
      planted: [{ tool: 'track_parcel', arguments: { tracking_id: 'PX-1290' }, result: '{"tracking_id":"PX-1290","status":"delivered","location":"Porto hub","eta":"2026-03-15"}' }],
      field: 'eta',
      plantedId: 10,
      kind: 'field',
    },
  },
  {
    prompt: [
      { role: 'system', content: 'You are an agent with tools. Use them to look up what you need, then reply with the value alone.' },
      { role: 'user', content: 'What is the eta for the tracking_id listed for customer ben.okafor-167? Reply with the value alone.' },
    ],
    answer: '2026-03-14',
    info: {
      planted: [
        { tool: 'find_parcels', arguments: { customer: 'ben.okafor-167' }, result: '{"customer":"ben.okafor-167","parcels":[{"tracking_id":"PX-7856","status":"out for delivery"}]}' },
        { tool: 'track_parcel', arguments: { tracking_id: 'PX-7856' }, result: '{"tracking_id":"PX-7856","status":"out for delivery","location":"Turin hub","eta":"2026-03-14"}' },
      ],
      field: 'eta',
      plantedId: 11,
      kind: 'chain',
    },
  },
];

/** The tasks the warm-up and GRPO train on: the other 20 planted (4 fields, 8 chains, 8 writes). */
export const TASKS: Task[] = [
  {
    prompt: [
      { role: 'system', content: 'You are an agent with tools. Use them to look up what you need, then reply with the value alone.' },
      { role: 'user', content: 'What is the location for the tracking_id listed for customer ana.moreau-270? Reply with the value alone.' },
    ],
    answer: 'Lyon hub',
    info: {
      planted: [
        { tool: 'find_parcels', arguments: { customer: 'ana.moreau-270' }, result: '{"customer":"ana.moreau-270","parcels":[{"tracking_id":"PX-8765","status":"in transit"}]}' },
        { tool: 'track_parcel', arguments: { tracking_id: 'PX-8765' }, result: '{"tracking_id":"PX-8765","status":"in transit","location":"Lyon hub","eta":"2026-03-14"}' },
      ],
      field: 'location',
      plantedId: 12,
      kind: 'chain',
    },
  },
  {
    prompt: [
      { role: 'system', content: 'You are an agent with tools. Use them to look up what you need, then reply with the value alone.' },
      { role: 'user', content: 'Reschedule delivery: for the tracking_id listed for customer ana.moreau-439, set date to 2026-03-22. Reply "done" when it is done.' },
    ],
    info: {
      planted: [
        { tool: 'find_parcels', arguments: { customer: 'ana.moreau-439' }, result: '{"customer":"ana.moreau-439","parcels":[{"tracking_id":"PX-5234","status":"in transit"}]}' },
        { tool: 'track_parcel', arguments: { tracking_id: 'PX-5234' }, result: '{"tracking_id":"PX-5234","status":"in transit","location":"Basel depot","eta":"2026-03-18"}' },
        { tool: 'reschedule_delivery', arguments: { tracking_id: 'PX-5234', date: '2026-03-22' }, result: '{"tracking_id":"PX-5234","ok":true,"eta":"2026-03-22"}' },
      ],
      field: 'date',
      plantedId: 13,
      kind: 'write',
      goal: { tool: 'reschedule_delivery', arguments: { tracking_id: 'PX-5234', date: '2026-03-22' } },
    },
  },
  {
    prompt: [
      { role: 'system', content: 'You are an agent with tools. Use them to look up what you need, then reply with the value alone.' },
      { role: 'user', content: 'What is the eta for tracking_id PX-7890? Reply with the value alone.' },
    ],
    answer: '2026-03-13',
    info: {
      planted: [{ tool: 'track_parcel', arguments: { tracking_id: 'PX-7890' }, result: '{"tracking_id":"PX-7890","status":"in transit","location":"Basel depot","eta":"2026-03-13"}' }],
      field: 'eta',
      plantedId: 14,
      kind: 'field',
    },
  },
  {
    prompt: [
      { role: 'system', content: 'You are an agent with tools. Use them to look up what you need, then reply with the value alone.' },
      { role: 'user', content: 'Reschedule delivery: for the tracking_id listed for customer ana.moreau-969, set date to 2026-03-20. Reply "done" when it is done.' },
    ],
    info: {
      planted: [
        { tool: 'find_parcels', arguments: { customer: 'ana.moreau-969' }, result: '{"customer":"ana.moreau-969","parcels":[{"tracking_id":"PX-1234","status":"in transit"}]}' },
        { tool: 'track_parcel', arguments: { tracking_id: 'PX-1234' }, result: '{"tracking_id":"PX-1234","status":"in transit","location":"Basel depot","eta":"2026-03-18"}' },
        { tool: 'reschedule_delivery', arguments: { tracking_id: 'PX-1234', date: '2026-03-20' }, result: '{"tracking_id":"PX-1234","ok":true,"eta":"2026-03-20"}' },
      ],
      field: 'date',
      plantedId: 15,
      kind: 'write',
      goal: { tool: 'reschedule_delivery', arguments: { tracking_id: 'PX-1234', date: '2026-03-20' } },
    },
  },
  {
    prompt: [
      { role: 'system', content: 'You are an agent with tools. Use them to look up what you need, then reply with the value alone.' },
      { role: 'user', content: 'Reschedule delivery: for the tracking_id listed for customer ana.moreau-874, set date to 2026-03-23. Reply "done" when it is done.' },
    ],
    info: {
      planted: [
        { tool: 'find_parcels', arguments: { customer: 'ana.moreau-874' }, result: '{"customer":"ana.moreau-874","parcels":[{"tracking_id":"PX-0987","status":"in transit"}]}' },
        { tool: 'track_parcel', arguments: { tracking_id: 'PX-0987' }, result: '{"tracking_id":"PX-0987","status":"in transit","location":"Basel depot","eta":"2026-03-18"}' },
        { tool: 'reschedule_delivery', arguments: { tracking_id: 'PX-0987', date: '2026-03-23' }, result: '{"tracking_id":"PX-0987","ok":true,"eta":"2026-03-23"}' },
      ],
      field: 'date',
      plantedId: 16,
      kind: 'write',
      goal: { tool: 'reschedule_delivery', arguments: { tracking_id: 'PX-0987', date: '2026-03-23' } },
    },
  },
  {
    prompt: [
      { role: 'system', content: 'You are an agent with tools. Use them to look up what you need, then reply with the value alone.' },
      { role: 'user', content: 'What is the eta for the tracking_id listed for customer ana.moreau-271? Reply with the value alone.' },
    ],
    answer: '2026-03-18',
    info: {
      planted: [
        { tool: 'find_parcels', arguments: { customer: 'ana.moreau-271' }, result: '{"customer":"ana.moreau-271","parcels":[{"tracking_id":"PX-5634","status":"in transit"}]}' },
        { tool: 'track_parcel', arguments: { tracking_id: 'PX-5634' }, result: '{"tracking_id":"PX-5634","status":"in transit","location":"Turin hub","eta":"2026-03-18"}' },
      ],
      field: 'eta',
      plantedId: 17,
      kind: 'chain',
    },
  },
  {
    prompt: [
      { role: 'system', content: 'You are an agent with tools. Use them to look up what you need, then reply with the value alone.' },
      { role: 'user', content: 'Reschedule delivery: for the tracking_id listed for customer ana.moreau-164, set date to 2026-03-20. Reply "done" when it is done.' },
    ],
    info: {
      planted: [
        { tool: 'find_parcels', arguments: { customer: 'ana.moreau-164' }, result: '{"customer":"ana.moreau-164","parcels":[{"tracking_id":"PX-2143","status":"in transit"}]}' },
        { tool: 'track_parcel', arguments: { tracking_id: 'PX-2143' }, result: '{"tracking_id":"PX-2143","status":"in transit","location":"Turin hub","eta":"2026-03-14"}' },
        { tool: 'reschedule_delivery', arguments: { tracking_id: 'PX-2143', date: '2026-03-20' }, result: '{"tracking_id":"PX-2143","ok":true,"eta":"2026-03-20"}' },
      ],
      field: 'date',
      plantedId: 18,
      kind: 'write',
      goal: { tool: 'reschedule_delivery', arguments: { tracking_id: 'PX-2143', date: '2026-03-20' } },
    },
  },
  {
    prompt: [
      { role: 'system', content: 'You are an agent with tools. Use them to look up what you need, then reply with the value alone.' },
      { role: 'user', content: 'What is the location for the tracking_id listed for customer ana.moreau-762? Reply with the value alone.' },
    ],
    answer: 'Lyon hub',
    info: {
      planted: [
        { tool: 'find_parcels', arguments: { customer: 'ana.moreau-762' }, result: '{"customer":"ana.moreau-762","parcels":[{"tracking_id":"PX-2543","status":"in transit"}]}' },
        { tool: 'track_parcel', arguments: { tracking_id: 'PX-2543' }, result: '{"tracking_id":"PX-2543","status":"in transit","location":"Lyon hub","eta":"2026-03-18"}' },
      ],
      field: 'location',
      plantedId: 19,
      kind: 'chain',
    },
  },
  {
    prompt: [
      { role: 'system', content: 'You are an agent with tools. Use them to look up what you need, then reply with the value alone.' },
      { role: 'user', content: 'Reschedule delivery: for the tracking_id listed for customer ana.moreau-910, set date to 2026-03-23. Reply "done" when it is done.' },
    ],
    info: {
      planted: [
        { tool: 'find_parcels', arguments: { customer: 'ana.moreau-910' }, result: '{"customer":"ana.moreau-910","parcels":[{"tracking_id":"PX-6543","status":"in transit"}]}' },
        { tool: 'track_parcel', arguments: { tracking_id: 'PX-6543' }, result: '{"tracking_id":"PX-6543","status":"in transit","location":"Basel depot","eta":"2026-03-18"}' },
        { tool: 'reschedule_delivery', arguments: { tracking_id: 'PX-6543', date: '2026-03-23' }, result: '{"tracking_id":"PX-6543","ok":true,"eta":"2026-03-23"}' },
      ],
      field: 'date',
      plantedId: 20,
      kind: 'write',
      goal: { tool: 'reschedule_delivery', arguments: { tracking_id: 'PX-6543', date: '2026-03-23' } },
    },
  },
  {
    prompt: [
      { role: 'system', content: 'You are an agent with tools. Use them to look up what you need, then reply with the value alone.' },
      { role: 'user', content: 'What is the eta for the tracking_id listed for customer ana.moreau-307? Reply with the value alone.' },
    ],
    answer: '2026-03-18',
    info: {
      planted: [
        { tool: 'find_parcels', arguments: { customer: 'ana.moreau-307' }, result: '{"customer":"ana.moreau-307","parcels":[{"tracking_id":"PX-3412","status":"in transit"}]}' },
        { tool: 'track_parcel', arguments: { tracking_id: 'PX-3412' }, result: '{"tracking_id":"PX-3412","status":"in transit","location":"Turin hub","eta":"2026-03-18"}' },
      ],
      field: 'eta',
      plantedId: 21,
      kind: 'chain',
    },
  },
  {
    prompt: [
      { role: 'system', content: 'You are an agent with tools. Use them to look up what you need, then reply with the value alone.' },
      { role: 'user', content: 'What is the status for tracking_id PX-1890? Reply with the value alone.' },
    ],
    answer: 'out for delivery',
    info: {
      planted: [{ tool: 'track_parcel', arguments: { tracking_id: 'PX-1890' }, result: '{"tracking_id":"PX-1890","status":"out for delivery","location":"Porto hub","eta":"2026-03-17"}' }],
      field: 'status',
      plantedId: 22,
      kind: 'field',
    },
  },
  {
    prompt: [
      { role: 'system', content: 'You are an agent with tools. Use them to look up what you need, then reply with the value alone.' },
      { role: 'user', content: 'What is the location for the tracking_id listed for customer ben.okafor-192? Reply with the value alone.' },
    ],
    answer: 'Ghent depot',
    info: {
      planted: [
        { tool: 'find_parcels', arguments: { customer: 'ben.okafor-192' }, result: '{"customer":"ben.okafor-192","parcels":[{"tracking_id":"PX-4765","status":"out for delivery"}]}' },
        { tool: 'track_parcel', arguments: { tracking_id: 'PX-4765' }, result: '{"tracking_id":"PX-4765","status":"out for delivery","location":"Ghent depot","eta":"2026-03-19"}' },
      ],
      field: 'location',
      plantedId: 23,
      kind: 'chain',
    },
  },
  {
    prompt: [
      { role: 'system', content: 'You are an agent with tools. Use them to look up what you need, then reply with the value alone.' },
      { role: 'user', content: 'What is the eta for tracking_id PX-2103? Reply with the value alone.' },
    ],
    answer: '2026-03-11',
    info: {
      planted: [{ tool: 'track_parcel', arguments: { tracking_id: 'PX-2103' }, result: '{"tracking_id":"PX-2103","status":"in transit","location":"Basel depot","eta":"2026-03-11"}' }],
      field: 'eta',
      plantedId: 24,
      kind: 'field',
    },
  },
  {
    prompt: [
      { role: 'system', content: 'You are an agent with tools. Use them to look up what you need, then reply with the value alone.' },
      { role: 'user', content: 'Reschedule delivery: for the tracking_id listed for customer ana.moreau-184, set date to 2026-03-25. Reply "done" when it is done.' },
    ],
    info: {
      planted: [
        { tool: 'find_parcels', arguments: { customer: 'ana.moreau-184' }, result: '{"customer":"ana.moreau-184","parcels":[{"tracking_id":"PX-6547","status":"in transit"}]}' },
        { tool: 'track_parcel', arguments: { tracking_id: 'PX-6547' }, result: '{"tracking_id":"PX-6547","status":"in transit","location":"Turin hub","eta":"2026-03-14"}' },
        { tool: 'reschedule_delivery', arguments: { tracking_id: 'PX-6547', date: '2026-03-25' }, result: '{"tracking_id":"PX-6547","ok":true,"eta":"2026-03-25"}' },
      ],
      field: 'date',
      plantedId: 25,
      kind: 'write',
      goal: { tool: 'reschedule_delivery', arguments: { tracking_id: 'PX-6547', date: '2026-03-25' } },
    },
  },
  {
    prompt: [
      { role: 'system', content: 'You are an agent with tools. Use them to look up what you need, then reply with the value alone.' },
      { role: 'user', content: 'What is the location for the tracking_id listed for customer ben.okafor-834? Reply with the value alone.' },
    ],
    answer: 'Lyon hub',
    info: {
      planted: [
        { tool: 'find_parcels', arguments: { customer: 'ben.okafor-834' }, result: '{"customer":"ben.okafor-834","parcels":[{"tracking_id":"PX-8769","status":"out for delivery"}]}' },
        { tool: 'track_parcel', arguments: { tracking_id: 'PX-8769' }, result: '{"tracking_id":"PX-8769","status":"out for delivery","location":"Lyon hub","eta":"2026-03-11"}' },
      ],
      field: 'location',
      plantedId: 26,
      kind: 'chain',
    },
  },
  {
    prompt: [
      { role: 'system', content: 'You are an agent with tools. Use them to look up what you need, then reply with the value alone.' },
      { role: 'user', content: 'What is the location for tracking_id PX-9018? Reply with the value alone.' },
    ],
    answer: 'Lyon hub',
    info: {
      planted: [{ tool: 'track_parcel', arguments: { tracking_id: 'PX-9018' }, result: '{"tracking_id":"PX-9018","status":"held at depot","location":"Lyon hub","eta":"2026-03-17"}' }],
      field: 'location',
      plantedId: 27,
      kind: 'field',
    },
  },
  {
    prompt: [
      { role: 'system', content: 'You are an agent with tools. Use them to look up what you need, then reply with the value alone.' },
      { role: 'user', content: 'What is the location for the tracking_id listed for customer dev.patel-130? Reply with the value alone.' },
    ],
    answer: 'Lyon hub',
    info: {
      planted: [
        { tool: 'find_parcels', arguments: { customer: 'dev.patel-130' }, result: '{"customer":"dev.patel-130","parcels":[{"tracking_id":"PX-8109","status":"held at depot"}]}' },
        { tool: 'track_parcel', arguments: { tracking_id: 'PX-8109' }, result: '{"tracking_id":"PX-8109","status":"held at depot","location":"Lyon hub","eta":"2026-03-17"}' },
      ],
      field: 'location',
      plantedId: 28,
      kind: 'chain',
    },
  },
  {
    prompt: [
      { role: 'system', content: 'You are an agent with tools. Use them to look up what you need, then reply with the value alone.' },
      { role: 'user', content: 'Reschedule delivery: for the tracking_id listed for customer dev.patel-745, set date to 2026-03-20. Reply "done" when it is done.' },
    ],
    info: {
      planted: [
        { tool: 'find_parcels', arguments: { customer: 'dev.patel-745' }, result: '{"customer":"dev.patel-745","parcels":[{"tracking_id":"PX-3452","status":"held at depot"}]}' },
        { tool: 'track_parcel', arguments: { tracking_id: 'PX-3452' }, result: '{"tracking_id":"PX-3452","status":"held at depot","location":"Basel depot","eta":"2026-03-13"}' },
        { tool: 'reschedule_delivery', arguments: { tracking_id: 'PX-3452', date: '2026-03-20' }, result: '{"tracking_id":"PX-3452","ok":true,"eta":"2026-03-20"}' },
      ],
      field: 'date',
      plantedId: 29,
      kind: 'write',
      goal: { tool: 'reschedule_delivery', arguments: { tracking_id: 'PX-3452', date: '2026-03-20' } },
    },
  },
  {
    prompt: [
      { role: 'system', content: 'You are an agent with tools. Use them to look up what you need, then reply with the value alone.' },
      { role: 'user', content: 'Reschedule delivery: for the tracking_id listed for customer dev.patel-148, set date to 2026-03-20. Reply "done" when it is done.' },
    ],
    info: {
      planted: [
        { tool: 'find_parcels', arguments: { customer: 'dev.patel-148' }, result: '{"customer":"dev.patel-148","parcels":[{"tracking_id":"PX-0321","status":"held at depot"}]}' },
        { tool: 'track_parcel', arguments: { tracking_id: 'PX-0321' }, result: '{"tracking_id":"PX-0321","status":"held at depot","location":"Porto hub","eta":"2026-03-17"}' },
        { tool: 'reschedule_delivery', arguments: { tracking_id: 'PX-0321', date: '2026-03-20' }, result: '{"tracking_id":"PX-0321","ok":true,"eta":"2026-03-20"}' },
      ],
      field: 'date',
      plantedId: 30,
      kind: 'write',
      goal: { tool: 'reschedule_delivery', arguments: { tracking_id: 'PX-0321', date: '2026-03-20' } },
    },
  },
  {
    prompt: [
      { role: 'system', content: 'You are an agent with tools. Use them to look up what you need, then reply with the value alone.' },
      { role: 'user', content: 'What is the eta for the tracking_id listed for customer ana.moreau-551? Reply with the value alone.' },
    ],
    answer: '2026-03-11',
    info: {
      planted: [
        { tool: 'find_parcels', arguments: { customer: 'ana.moreau-551' }, result: '{"customer":"ana.moreau-551","parcels":[{"tracking_id":"PX-9678","status":"in transit"}]}' },
        { tool: 'track_parcel', arguments: { tracking_id: 'PX-9678' }, result: '{"tracking_id":"PX-9678","status":"in transit","location":"Basel depot","eta":"2026-03-11"}' },
      ],
      field: 'eta',
      plantedId: 31,
      kind: 'chain',
    },
  },
];

/**
 * More tasks to practise on, planted the same three ways but with ids drawn fresh for each task
 * (seeded, so every run gets the same ones): a new `PX-NNNN` parcel, and a new customer login for a
 * chain or a write, whose values (status, location, eta, a new date) are drawn from those the log
 * shows. No id repeats across tasks or appears in RECORDS, EVAL_TASKS or TASKS, so a policy that
 * memorises ids gains nothing here: the only thing that works on all of them is copying the id from
 * the question (and, in a chain, from the listing) into the call.
 */
export function practiceTasks(count: number, seed: number): Task[] {
  let stateOfDraw = seed >>> 0;
  // mulberry32: a small seeded generator, uniform 32-bit draws.
  const draw = (below: number) => {
    stateOfDraw = (stateOfDraw + 0x6d2b79f5) >>> 0;
    let t = stateOfDraw;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (((t ^ (t >>> 14)) >>> 0) % below) as number;
  };
  const pick = <T>(list: readonly T[]): T => list[draw(list.length)]!;
  const parcels = RECORDS.filter((record) => record.tool === 'track_parcel').map((record) => JSON.parse(record.result) as Record<string, string>);
  const statuses = [...new Set(parcels.map((parcel) => parcel.status!))];
  const locations = [...new Set(parcels.map((parcel) => parcel.location!))];
  const etas = [...new Set(parcels.map((parcel) => parcel.eta!))];
  const dates = [...new Set(RECORDS.filter((record) => record.tool === 'reschedule_delivery').map((record) => String(record.arguments.date)))];
  const logins = [...new Set(RECORDS.filter((record) => record.tool === 'find_parcels').map((record) => String(record.arguments.customer).replace(/-\d+$/, '')))];
  const used = new Set(JSON.stringify([RECORDS, EVAL_TASKS, TASKS]).match(/PX-\d{4}|[a-z]+\.[a-z]+-\d{3}/g) ?? []);
  const fresh = (make: () => string) => {
    for (;;) {
      const id = make();
      if (!used.has(id)) {
        used.add(id);
        return id;
      }
    }
  };
  const system = { role: 'system' as const, content: 'You are an agent with tools. Use them to look up what you need, then reply with the value alone.' };
  const tasks: Task[] = [];
  for (let index = 0; index < count; index++) {
    const kind = (['field', 'chain', 'write'] as const)[index % 3]!;
    const id = fresh(() => `PX-${String(draw(10_000)).padStart(4, '0')}`);
    const parcel = { tracking_id: id, status: pick(statuses), location: pick(locations), eta: pick(etas) };
    const track = { tool: 'track_parcel', arguments: { tracking_id: id }, result: JSON.stringify(parcel) };
    const plantedId = EVAL_TASKS.length + TASKS.length + index;
    if (kind === 'field') {
      const field = pick(['status', 'location', 'eta'] as const);
      const question = `What is the ${field} for tracking_id ${id}? Reply with the value alone.`;
      tasks.push({ prompt: [system, { role: 'user', content: question }], answer: parcel[field], info: { planted: [track], field, plantedId, kind } });
      continue;
    }
    const customer = fresh(() => `${pick(logins)}-${String(draw(1000)).padStart(3, '0')}`);
    const listing = { tool: 'find_parcels', arguments: { customer }, result: JSON.stringify({ customer, parcels: [{ tracking_id: id, status: parcel.status }] }) };
    if (kind === 'chain') {
      // A field the listing does not show, so that only the second call answers.
      const field = pick(['location', 'eta'] as const);
      const question = `What is the ${field} for the tracking_id listed for customer ${customer}? Reply with the value alone.`;
      tasks.push({ prompt: [system, { role: 'user', content: question }], answer: parcel[field], info: { planted: [listing, track], field, plantedId, kind } });
      continue;
    }
    const date = pick(dates.filter((candidate) => candidate !== parcel.eta));
    const goal = { tool: 'reschedule_delivery', arguments: { tracking_id: id, date } };
    const write = { ...goal, result: JSON.stringify({ tracking_id: id, ok: true, eta: date }) };
    const question = `Reschedule delivery: for the tracking_id listed for customer ${customer}, set date to ${date}. Reply "done" when it is done.`;
    tasks.push({ prompt: [system, { role: 'user', content: question }], info: { planted: [listing, track, write], field: 'date', plantedId, kind, goal } });
  }
  return tasks;
}

/** The practice tasks the lesson trains on beside TASKS: 240, a third of each kind. */
export const PRACTICE_TASKS: Task[] = practiceTasks(240, 7);

/** What tabrl and the tab lend: a simulator (the Studio's simulator choice, or --simulator-*) and a judge. */
export interface ParcelDeskArgs {
  simulatorClient?: ChatClient;
  simulatorModel?: string;
  judgeClient?: ChatClient;
  judgeModel?: string;
  /** "scripted" (offline nearest-record retrieval), "simulator" (the lent simulator) or "judge" (the lent judge); default: "simulator" when one is lent, else "scripted". */
  simulator?: 'scripted' | 'simulator' | 'judge';
}

/** 1 when the final answer matches the planted one after normalisation; 0 for a task without one (a write). */
export function exactMatchReward(ctx: RewardContext): number {
  return ctx.answer !== undefined && answersMatch(completionText(ctx.completion), ctx.answer) ? 1 : 0;
}

/**
 * Partial credit, verifiable like the rest: 1 when the episode made the planted path's first call
 * (`info.planted[0]`: the right tool with the id the question names, copied exactly) in the simulated
 * backend, else 0. A call with a memorised or made-up id earns nothing; a later call is not required,
 * so a shorter path that still reaches the answer loses nothing here.
 */
export function firstCallReward(ctx: RewardContext): number {
  const planted = Array.isArray(ctx.info.planted) ? (ctx.info.planted as { tool?: unknown; arguments?: unknown }[]) : [];
  const backend = (ctx.state as { backend?: { calls?: unknown } }).backend;
  const calls = Array.isArray(backend?.calls) ? (backend.calls as { tool?: unknown; arguments?: unknown }[]) : [];
  const first = planted[0];
  if (!first) return 0;
  const key = (call: { tool?: unknown; arguments?: unknown }) => `${String(call.tool)} ${canonicalJson(call.arguments ?? {}).toLowerCase()}`;
  return calls.some((call) => key(call) === key(first)) ? 1 : 0;
}

/** 1 when the policy called at least one tool. */
export function usedToolsMetric(ctx: RewardContext): number {
  return ctx.completion.some((message) => message.role === 'tool') ? 1 : 0;
}

/** Builds the environment: TASKS to train on, EVAL_TASKS held out, with Parcelo's simulated tools. */
export default function loadEnvironment(args: ParcelDeskArgs = {}) {
  const simulatorName = args.simulator ?? (args.simulatorClient ? 'simulator' : 'scripted');
  if (simulatorName !== 'scripted' && simulatorName !== 'simulator' && simulatorName !== 'judge')
    throw new Error(`simulator should be "scripted", "simulator" or "judge", not ${JSON.stringify(simulatorName)}`);
  if (simulatorName === 'simulator' && !args.simulatorClient)
    throw new Error('simulator "simulator" uses the lent simulator and none was given: choose one in Studio → Simulated tools, or run tabrl with --simulator-model');
  if (simulatorName === 'judge' && !args.judgeClient) throw new Error('simulator "judge" simulates the tools with the lent judge: pick a model in the Judge card');
  const lent =
    simulatorName === 'simulator' ? { client: args.simulatorClient, model: args.simulatorModel } : simulatorName === 'judge' ? { client: args.judgeClient, model: args.judgeModel } : undefined;
  const simulator = new ToolSimulator({ tools: TOOLS, records: RECORDS, client: lent?.client ?? new ScriptedSimulatorClient(), model: lent ? (lent.model ?? 'default') : 'scripted' });
  const rubric = new Rubric({
    rewards: [
      { fn: exactMatchReward, weight: 1 },
      { fn: reachedStateReward, weight: 1 },
      { fn: firstCallReward, weight: 0.5 },
      { fn: usedToolsMetric, weight: 0 },
    ],
  });
  return new SimulatedToolEnv({ name: 'parcel-desk', dataset: [...TASKS, ...PRACTICE_TASKS], evalDataset: EVAL_TASKS, simulator, rubric, maxTurns: 8 });
}
