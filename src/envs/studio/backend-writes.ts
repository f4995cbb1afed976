/**
 * The simulated backend's writes, seen by later reads: a call of a write tool (named by a write
 * verb: reschedule_, set_, update_, ...) whose first argument names an entity (a tracking id, an
 * order id) changes that entity for the rest of the episode, so a later read of it returns the
 * written values, whichever simulator answered the read (the offline scripted one, which only
 * retrieves records, or a model). A write changes the fields of the entity's objects that the read
 * already has: each written argument under its own name and under the result fields the recorded
 * writes echo it in (reschedule_delivery's `date` comes back as `eta` in the traces, so a later
 * track_parcel of that parcel shows the new eta), and the fields of the write's result when that
 * result names the entity. A write that failed (an "error" field, or "ok"/"success" false) changes
 * nothing. A write's own result shows its own new values. An object is the entity's when one of its own values is the entity's id, or when it is
 * the top-level result of a read whose arguments name that id (unless it names another id under the
 * entity's key). Pure functions over plain data; the
 * simulator (tool-simulator.ts) applies them to every result it gives.
 */
import type { ToolRecord } from './tool-records.ts';
import { canonicalJson } from './tool-retrieval.ts';

/** Tool names that write: a verb that changes the backend's state. */
const WRITE_TOOL = /^(set|update|reschedule|schedule|change|create|add|cancel|delete|remove|assign|move|book|send|mark|rename|edit|modify|post|put|patch)(_|[A-Z]|$)/;

/** Result fields that report how a write went rather than the entity's state. */
const OUTCOME_FIELDS = new Set(['ok', 'success', 'error', 'message']);

/** True when a tool's name starts with a write verb (set_, update_, reschedule_, ...). */
export function isWriteTool(tool: string): boolean {
  return WRITE_TOOL.test(tool);
}

/** True when a write's result says it failed: an "error" field, or "ok"/"success" false. */
export function failedWriteResult(result: string): boolean {
  const parsed = parseObject(result);
  return parsed !== undefined && ('error' in parsed || parsed.ok === false || parsed.success === false);
}

/** Per write tool, per written argument: the result fields the recorded successful writes echo its value in (besides its own name). */
export type WrittenFieldNames = ReadonlyMap<string, ReadonlyMap<string, readonly string[]>>;

/** Learns from recorded writes which result fields hold each written argument (e.g. reschedule_delivery's date → eta). */
export function writtenFieldNames(records: readonly ToolRecord[]): WrittenFieldNames {
  const names = new Map<string, Map<string, string[]>>();
  for (const record of records) {
    if (!isWriteTool(record.tool) || failedWriteResult(record.result)) continue;
    const result = parseObject(record.result);
    if (!result) continue;
    const byArgument = names.get(record.tool) ?? new Map<string, string[]>();
    names.set(record.tool, byArgument);
    for (const [argument, value] of Object.entries(record.arguments).slice(1)) {
      const fields = byArgument.get(argument) ?? [];
      byArgument.set(argument, fields);
      for (const [field, item] of Object.entries(result)) {
        if (field !== argument && !fields.includes(field) && canonicalJson(item) === canonicalJson(value)) fields.push(field);
      }
    }
  }
  return names;
}

/**
 * The result of `call` as the episode's state has it after `writes` (the calls made so far, in
 * order): each successful write's new values set in the objects of `result` that are its entity's;
 * for a write, its own arguments set in its own result (unless it failed). A result that is not
 * JSON, and one nothing changes, are returned as they are (the same text).
 */
export function applyEpisodeWrites(result: string, call: Pick<ToolRecord, 'tool' | 'arguments'>, writes: readonly ToolRecord[], fieldNames: WrittenFieldNames): string {
  // A write's own result shows its own arguments (a retrieved record of the same entity may carry older values); a read shows every write so far.
  const changes = isWriteTool(call.tool)
    ? failedWriteResult(result)
      ? []
      : changeOf({ ...call, result: '' }, fieldNames)
    : writes.filter((write) => isWriteTool(write.tool) && !failedWriteResult(write.result)).flatMap((write) => changeOf(write, fieldNames));
  if (changes.length === 0) return result;
  let parsed: unknown;
  try {
    parsed = JSON.parse(result) as unknown;
  } catch {
    return result;
  }
  const callNames = (id: string) => Object.values(call.arguments).includes(id);
  let changed = false;
  const visit = (value: unknown, topLevel: boolean): void => {
    if (Array.isArray(value)) for (const item of value) visit(item, false);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return;
    const object = value as Record<string, unknown>;
    for (const item of Object.values(object)) visit(item, false);
    for (const change of changes) {
      const own = Object.values(object).includes(change.id);
      // A read of the entity whose result names another id under the entity's key is another entity's record.
      const another = change.entityName in object && object[change.entityName] !== change.id;
      if (!own && (another || !(topLevel && callNames(change.id)))) continue;
      for (const [field, item] of change.fields) {
        if (!(field in object) || canonicalJson(object[field]) === canonicalJson(item)) continue;
        object[field] = item;
        changed = true;
      }
    }
  };
  visit(parsed, true);
  return changed ? JSON.stringify(parsed) : result;
}

/** What one write changes: its entity's id and the fields it sets, in the order they apply (the result's fields, then the arguments'). */
interface EntityChange {
  entityName: string;
  id: string;
  fields: Array<[string, unknown]>;
}

function changeOf(write: ToolRecord, fieldNames: WrittenFieldNames): EntityChange[] {
  const [entity] = Object.entries(write.arguments);
  if (!entity || typeof entity[1] !== 'string' || entity[1] === '') return [];
  const [entityName, id] = entity as [string, string];
  const fields: Array<[string, unknown]> = [];
  const result = parseObject(write.result);
  if (result && Object.values(result).includes(id)) {
    for (const [field, value] of Object.entries(result)) if (field !== entityName && !OUTCOME_FIELDS.has(field) && value !== id) fields.push([field, value]);
  }
  for (const [argument, value] of Object.entries(write.arguments).slice(1)) {
    fields.push([argument, value]);
    for (const field of fieldNames.get(write.tool)?.get(argument) ?? []) fields.push([field, value]);
  }
  return [{ entityName, id, fields }];
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
