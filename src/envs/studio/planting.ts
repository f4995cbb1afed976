/**
 * Planting backwards: the end state is chosen first, then the task that needs it. Three kinds, all
 * made from recorded calls used as templates, with argument values no recorded call used (so only
 * the simulated backend, where the records are planted as `info.planted`, knows the answer):
 * - `field`: one call, whose result holds a planted value in one field; the task asks for it.
 * - `chain`: a record reached by a sequence of calls — a listing tool whose recorded results name
 *   the argument of a reading tool (find_parcels lists a tracking_id that track_parcel reads) is
 *   planted for a new entry value with a new id, and the reading tool's record for that id holds
 *   the planted value; the task names only the entry value, so the agent must call both.
 * - `write`: a state reached by a write — a tool named by a write verb (reschedule_, set_, update_,
 *   ...) whose first recorded argument names an entity the other tools read; the entity is planted
 *   (through a listing tool when there is one) and the goal is the write with a new value for the
 *   other arguments (`info.goal`, checked by planted-goal.ts against the state the episode reached).
 * Values are planted consistently (a listing's entry for the id agrees with the id's record).
 * Questions here are templates (planted-questions.ts rewrites them with a generator model); the
 * offline solver (heuristic-tool-solver.ts) reads these shapes. Pure and seeded.
 */
import type { ToolRecord } from './tool-records.ts';
import type { PlantedGoal } from './planted-goal.ts';
import { canonicalJson } from './tool-retrieval.ts';
import { failedWriteResult, isWriteTool } from './backend-writes.ts';
import { hashText } from './tool-simulator.ts';

/** The kinds of planted task, in the order `plantBackwardsTasks` cycles through them. */
export const PLANT_KINDS = ['field', 'chain', 'write'] as const;

/** A kind of planted task; see the module comment. */
export type PlantKind = (typeof PLANT_KINDS)[number];

/** A task planted backwards: the planted records, the question that needs them, and the planted answer or goal. */
export interface PlantedTask {
  id: number;
  kind: PlantKind;
  question: string;
  /** The planted answer (field, chain), or the goal write in words (write). */
  answer: string;
  /** The record that holds the answer (field, chain), or the planted result of the goal write (write). */
  planted: ToolRecord;
  /** Every record planted for the task, in the order a solving agent reaches them. */
  records: ToolRecord[];
  /** The write the agent must make (write tasks only). */
  goal?: PlantedGoal;
  /** The recorded call the answer's record was made from. */
  template: ToolRecord;
  /** The result field whose value is the answer (field, chain), or the written argument (write). */
  field: string;
  /** Who wrote the question: the template here, or a generator model (planted-questions.ts). */
  questionSource?: 'template' | 'generator';
}

/** Plants up to `count` tasks of `kinds` (default all three), cycling through the kinds the records allow; seeded. */
export function plantBackwardsTasks(records: readonly ToolRecord[], count: number, seed: number, kinds: readonly PlantKind[] = PLANT_KINDS): PlantedTask[] {
  const used = new Set(records.flatMap((record) => [...stringLeaves(record.arguments), ...stringLeaves(parseJson(record.result))]));
  const usedCalls = new Set(records.map((record) => `${record.tool}${canonicalJson(record.arguments)}`));
  const links = findLinks(records);
  const planters: Record<PlantKind, (random: Random, turn: number) => Omit<PlantedTask, 'id'> | undefined> = {
    field: (random, turn) => plantField(records, random, turn),
    chain: (random) => plantChain(records, links, random, used),
    write: (random) => plantWrite(records, links, random, used),
  };
  const tasks: PlantedTask[] = [];
  for (let attempt = 0; tasks.length < count && attempt < count * 8 * kinds.length; attempt++) {
    const random: Random = (salt) => hashText(`${seed}:${attempt}:${salt}`);
    const task = planters[kinds[attempt % kinds.length]!](random, Math.floor(attempt / kinds.length));
    // A planted call must be new (no recorded call and no earlier planted one has its arguments).
    if (!task || task.records.some((record) => usedCalls.has(`${record.tool}${canonicalJson(record.arguments)}`))) continue;
    for (const record of task.records) usedCalls.add(`${record.tool}${canonicalJson(record.arguments)}`);
    tasks.push({ ...task, id: tasks.length });
  }
  return tasks;
}

/** A seeded draw: a 32-bit number for each salt. */
type Random = (salt: string) => number;

function pick<T>(list: readonly T[], random: Random, salt: string): T | undefined {
  return list.length === 0 ? undefined : list[random(salt) % list.length];
}

/** A field task; the tool is taken in turn (each tool's templates alike), the template, field and value by draw. */
function plantField(records: readonly ToolRecord[], random: Random, turn: number): Omit<PlantedTask, 'id'> | undefined {
  const templates = records.filter((record) => plantableFields(record).length > 0);
  const tools = [...new Set(templates.map((record) => record.tool))];
  if (tools.length === 0) return undefined;
  const template = pick(
    templates.filter((record) => record.tool === tools[turn % tools.length]),
    random,
    'template',
  )!;
  const field = pick(plantableFields(template), random, 'field')!;
  const args = freshArguments(template.arguments, random);
  const read = plantRead(records, template, args, field, random);
  if (!read) return undefined;
  return { kind: 'field', question: `What is the ${field} for ${subjectOf(args)}? Reply with the value alone.`, answer: read.value, planted: read.record, records: [read.record], template, field };
}

function plantChain(records: readonly ToolRecord[], links: readonly Link[], random: Random, used: ReadonlySet<string>): Omit<PlantedTask, 'id'> | undefined {
  const link = pick(
    links.filter((candidate) => plantableFields(candidate.read).length > 0),
    random,
    'link',
  );
  if (!link) return undefined;
  const listed = plantListing(link, random);
  if (used.has(listed.id)) return undefined;
  const entry = entryOf(parseJson(listed.record.result), listed.id);
  // Prefer a field the listing does not show, so that only the second call answers.
  const fields = plantableFields(link.read);
  const hidden = fields.filter((field) => !(typeof entry === 'object' && entry !== null && field in entry));
  const field = pick(hidden.length > 0 ? hidden : fields, random, 'field')!;
  const read = plantRead(records, link.read, { ...link.read.arguments, [link.argument]: listed.id }, field, random);
  if (!read) return undefined;
  if (typeof entry === 'object' && entry !== null && field in entry) listed.record.result = JSON.stringify(setEntryField(parseJson(listed.record.result), listed.id, field, read.parsed[field]));
  return {
    kind: 'chain',
    question: `What is the ${field} for the ${link.argument} listed for ${subjectOf(listed.args)}? Reply with the value alone.`,
    answer: read.value,
    planted: read.record,
    records: [listed.record, read.record],
    template: link.read,
    field,
  };
}

function plantWrite(records: readonly ToolRecord[], links: readonly Link[], random: Random, used: ReadonlySet<string>): Omit<PlantedTask, 'id'> | undefined {
  const template = pick(
    records.filter((record) => isWriteTool(record.tool) && Object.keys(record.arguments).length >= 2 && typeof Object.values(record.arguments)[0] === 'string' && !failedWriteResult(record.result)),
    random,
    'write',
  );
  if (!template) return undefined;
  const [entityName, entityValue] = Object.entries(template.arguments)[0] as [string, string];
  const written = Object.keys(template.arguments).slice(1);
  // New values for the written arguments: other values the traces wrote, never the template's.
  const goalArgs: Record<string, unknown> = {};
  for (const name of written) {
    const values = [...new Set(records.filter((record) => record.tool === template.tool).map((record) => canonicalJson(record.arguments[name])))].filter(
      (value) => value !== canonicalJson(template.arguments[name]) && value !== undefined,
    );
    const value = pick(values, random, `value:${name}`);
    if (value === undefined) return undefined;
    goalArgs[name] = JSON.parse(value) as unknown;
  }
  const link = pick(
    links.filter((candidate) => candidate.argument === entityName && candidate.read.tool !== template.tool),
    random,
    'link',
  );
  const planted: ToolRecord[] = [];
  let id: string;
  let where: string;
  if (link) {
    const listed = plantListing(link, random);
    id = listed.id;
    planted.push(listed.record, { tool: link.read.tool, arguments: { ...link.read.arguments, [entityName]: id }, result: renameValues(link.read.result, new Map([[link.value, id]])) });
    where = `for the ${entityName} listed for ${subjectOf(listed.args)}`;
  } else {
    id = freshArguments({ [entityName]: entityValue }, random)[entityName] as string;
    where = `for ${entityName} ${id}`;
  }
  if (used.has(id)) return undefined;
  const goal: PlantedGoal = { tool: template.tool, arguments: { [entityName]: id, ...goalArgs } };
  const renames = new Map<string, string>([
    [entityValue, id],
    ...written
      .filter((name) => typeof template.arguments[name] === 'string' && typeof goalArgs[name] === 'string')
      .map((name) => [template.arguments[name] as string, goalArgs[name] as string] as [string, string]),
  ]);
  const result: ToolRecord = { tool: template.tool, arguments: goal.arguments, result: renameValues(template.result, renames) };
  planted.push(result);
  const setting = written.map((name) => `${name} to ${typeof goalArgs[name] === 'string' ? goalArgs[name] : JSON.stringify(goalArgs[name])}`).join(' and ');
  const verb = template.tool.replace(/_/g, ' ').replace(/^./, (first) => first.toUpperCase());
  return {
    kind: 'write',
    question: `${verb}: ${where}, set ${setting}. Reply "done" when it is done.`,
    answer: `${template.tool} ${canonicalJson(goal.arguments)}`,
    planted: result,
    records: planted,
    goal,
    template,
    field: written.join(','),
  };
}

/** A listing tool's record whose result names a reading tool's argument value. */
interface Link {
  list: ToolRecord;
  read: ToolRecord;
  /** The reading tool's argument that the listing names. */
  argument: string;
  value: string;
}

/** Every (listing record, reading record) pair of different tools where the listing's result holds the reading call's argument value. */
function findLinks(records: readonly ToolRecord[]): Link[] {
  const links: Link[] = [];
  for (const read of records) {
    for (const [argument, value] of Object.entries(read.arguments)) {
      if (typeof value !== 'string' || value === '') continue;
      for (const list of records) {
        if (list.tool === read.tool || isWriteTool(list.tool) || stringLeaves(list.arguments).includes(value)) continue;
        if (stringLeaves(parseJson(list.result)).includes(value)) links.push({ list, read, argument, value });
      }
    }
  }
  return links;
}

/** The listing of a link for new entry arguments, naming one new id (the listing's other entries dropped). */
function plantListing(link: Link, random: Random): { record: ToolRecord; args: Record<string, unknown>; id: string } {
  const args = freshArguments(link.list.arguments, random);
  const id = freshArguments({ id: link.value }, (salt) => random(`id:${salt}`)).id as string;
  const renames = new Map<string, string>([
    [link.value, id],
    ...Object.entries(link.list.arguments)
      .filter(([, value]) => typeof value === 'string')
      .map(([name, value]) => [value as string, args[name] as string] as [string, string]),
  ]);
  const result = keepEntriesNaming(parseJson(renameValues(link.list.result, renames)), id);
  return { record: { tool: link.list.tool, arguments: args, result: JSON.stringify(result) }, args, id };
}

/** A reading tool's record for `args`, made from `template`, with `field` set to another value the traces give it. */
function plantRead(
  records: readonly ToolRecord[],
  template: ToolRecord,
  args: Record<string, unknown>,
  field: string,
  random: Random,
): { record: ToolRecord; value: string; parsed: Record<string, unknown> } | undefined {
  const original = parseJson(template.result) as Record<string, unknown>;
  const others = [
    ...new Set(
      records
        .filter((record) => record.tool === template.tool)
        .map((record) => fieldValue(record, field))
        .filter((value): value is string | number => value !== undefined && value !== original[field]),
    ),
  ];
  const value = pick(others, random, 'value');
  if (value === undefined) return undefined;
  const renamed = new Map(Object.entries(template.arguments).map(([name, old]) => [canonicalJson(old), args[name]]));
  const parsed: Record<string, unknown> = {};
  for (const [name, old] of Object.entries(original)) parsed[name] = name === field ? value : renamed.has(canonicalJson(old)) ? renamed.get(canonicalJson(old)) : old;
  return { record: { tool: template.tool, arguments: args, result: JSON.stringify(parsed) }, value: String(value), parsed };
}

/** The top-level fields of a JSON-object result whose value is a string or number that is not one of the call's argument values. */
function plantableFields(record: ToolRecord): string[] {
  const value = parseJson(record.result);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [];
  const argValues = new Set(Object.values(record.arguments).map((arg) => canonicalJson(arg)));
  return Object.entries(value)
    .filter(([, item]) => (typeof item === 'string' || typeof item === 'number') && !argValues.has(canonicalJson(item)))
    .map(([name]) => name);
}

function fieldValue(record: ToolRecord, field: string): string | number | undefined {
  const value = (parseJson(record.result) as Record<string, unknown> | null)?.[field];
  return typeof value === 'string' || typeof value === 'number' ? value : undefined;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Every string inside a JSON value (object values, array items), depth first. */
function stringLeaves(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringLeaves);
  if (typeof value === 'object' && value !== null) return Object.values(value).flatMap(stringLeaves);
  return [];
}

/** A JSON text with every string equal to a key of `renames` replaced by its value. */
function renameValues(text: string, renames: ReadonlyMap<string, string>): string {
  const walk = (value: unknown): unknown => {
    if (typeof value === 'string') return renames.get(value) ?? value;
    if (Array.isArray(value)) return value.map(walk);
    if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, walk(item)]));
    return value;
  };
  const parsed = parseJson(text);
  return parsed === undefined ? text : JSON.stringify(walk(parsed));
}

/** The value with each array that has an item naming `id` cut down to those items. */
function keepEntriesNaming(value: unknown, id: string): unknown {
  if (Array.isArray(value)) {
    const naming = value.filter((item) => stringLeaves(item).includes(id));
    return (naming.length > 0 ? naming : value).map((item) => keepEntriesNaming(item, id));
  }
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, keepEntriesNaming(item, id)]));
  return value;
}

/** The innermost object that names `id` among its own values (a listing's entry), if any. */
function entryOf(value: unknown, id: string): Record<string, unknown> | undefined {
  if (Array.isArray(value)) return value.map((item) => entryOf(item, id)).find((found) => found !== undefined);
  if (typeof value !== 'object' || value === null) return undefined;
  const inner = Object.values(value)
    .map((item) => entryOf(item, id))
    .find((found) => found !== undefined);
  return inner ?? (Object.values(value).includes(id) ? (value as Record<string, unknown>) : undefined);
}

/** The value with the entry naming `id` given `field: fieldValue`. */
function setEntryField(value: unknown, id: string, field: string, fieldValue: unknown): unknown {
  const entry = entryOf(value, id);
  if (entry) entry[field] = fieldValue;
  return value;
}

/** "name value and name value" for a question. */
function subjectOf(args: Record<string, unknown>): string {
  return Object.entries(args)
    .map(([name, value]) => `${name} ${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(' and ');
}

/** New argument values: each digit of a string redrawn (an id no record used), a string without digits given a numbered suffix, a number offset. */
function freshArguments(args: Record<string, unknown>, random: Random): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(args).map(([name, value]) => {
      if (typeof value === 'number') return [name, value + 1 + (random(name) % 97)];
      if (typeof value !== 'string') return [name, value];
      let i = 0;
      const redrawn = value.replace(/\d/g, () => String(random(`${name}:${i++}`) % 10));
      return [name, /\d/.test(value) ? redrawn : `${value}-${100 + (random(name) % 900)}`];
    }),
  );
}
