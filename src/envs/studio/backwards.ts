/**
 * Tasks planted backwards: the end state is chosen first, then the task. For a tool of the traces, a
 * recorded call is taken as a template and turned into a new one — new argument values that no
 * recorded call used, and a result in which one field holds a planted value (another value that
 * field takes in the records) — and the task asks for that field, so only calling the tool with
 * those arguments in the simulated backend, where the record is planted (`info.planted`), finds it.
 * The reward checks the planted answer (exact match), so it is verifiable without production labels.
 * `verifyBackwardsTasks` runs a solver k times with the simulated tools and k times without any
 * tool (the closed-book test, for tools): a task the solver passes without a tool is rejected, and
 * so is one it cannot solve with them. Planting is pure and seeded; verification calls the solver.
 */
import type { ChatClient } from '../client.ts';
import { evaluate } from '../evaluate.ts';
import { Rubric, type RewardContext } from '../rubric.ts';
import { SingleTurnEnv } from '../singleturn-env.ts';
import type { Task, ToolSchema } from '../types.ts';
import { completionText } from '../messages.ts';
import { answersMatch } from './answer-match.ts';
import { SimulatedToolEnv } from './simulated-tool-env.ts';
import type { ToolRecord } from './tool-records.ts';
import { canonicalJson } from './tool-retrieval.ts';
import { hashText, ToolSimulator, type SimulatorCorrection } from './tool-simulator.ts';

/** A task planted backwards: the planted record, the question that needs it, and the planted answer. */
export interface PlantedTask {
  id: number;
  question: string;
  answer: string;
  planted: ToolRecord;
  /** The recorded call it was made from. */
  template: ToolRecord;
  /** The result field whose value is the answer. */
  field: string;
}

/** The system prompt of a planted task: the tools are the only source of the answer. */
export const PLANTED_SYSTEM_PROMPT = 'You are an agent with tools. Use them to look up what you need, then reply with the value alone.';

/** Plants up to `count` tasks over the tools whose recorded results are JSON objects with a field to ask for; seeded. */
export function plantBackwardsTasks(records: readonly ToolRecord[], count: number, seed: number): PlantedTask[] {
  const usedArgs = new Set(records.map((record) => `${record.tool}${canonicalJson(record.arguments)}`));
  const templates = records.filter((record) => plantableFields(record).length > 0);
  const tasks: PlantedTask[] = [];
  const tools = [...new Set(templates.map((record) => record.tool))];
  for (let attempt = 0; tasks.length < count && attempt < count * 8 && tools.length > 0; attempt++) {
    const random = (salt: string) => hashText(`${seed}:${attempt}:${salt}`);
    const tool = tools[attempt % tools.length]!;
    const ofTool = templates.filter((record) => record.tool === tool);
    const template = ofTool[random('template') % ofTool.length]!;
    const fields = plantableFields(template);
    const field = fields[random('field') % fields.length]!;
    const args = freshArguments(template.arguments, random);
    const key = `${tool}${canonicalJson(args)}`;
    if (usedArgs.has(key)) continue;
    const original = JSON.parse(template.result) as Record<string, unknown>;
    const others = [...new Set(records.filter((record) => record.tool === tool).map((record) => fieldValue(record, field)).filter((value): value is string | number => value !== undefined && value !== original[field]))];
    if (others.length === 0) continue;
    const plantedValue = others[random('value') % others.length]!;
    const result: Record<string, unknown> = {};
    const renamed = new Map(Object.entries(template.arguments).map(([name, value]) => [canonicalJson(value), args[name]]));
    for (const [name, value] of Object.entries(original)) result[name] = name === field ? plantedValue : renamed.has(canonicalJson(value)) ? renamed.get(canonicalJson(value)) : value;
    usedArgs.add(key);
    const subject = Object.entries(args).map(([name, value]) => `${name} ${typeof value === 'string' ? value : JSON.stringify(value)}`).join(' and ');
    tasks.push({ id: tasks.length, question: `What is the ${field} for ${subject}? Reply with the value alone.`, answer: String(plantedValue), planted: { tool, arguments: args, result: JSON.stringify(result) }, template, field });
  }
  return tasks;
}

/** The top-level fields of a JSON-object result whose value is a string or number that is not one of the call's argument values. */
function plantableFields(record: ToolRecord): string[] {
  let value: unknown;
  try {
    value = JSON.parse(record.result);
  } catch {
    return [];
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [];
  const argValues = new Set(Object.values(record.arguments).map((arg) => canonicalJson(arg)));
  return Object.entries(value).filter(([, item]) => (typeof item === 'string' || typeof item === 'number') && !argValues.has(canonicalJson(item))).map(([name]) => name);
}

function fieldValue(record: ToolRecord, field: string): string | number | undefined {
  try {
    const value = (JSON.parse(record.result) as Record<string, unknown>)[field];
    return typeof value === 'string' || typeof value === 'number' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** New argument values: each digit of a string redrawn (an id no record used), a string without digits given a numbered suffix, a number offset. */
function freshArguments(args: Record<string, unknown>, random: (salt: string) => number): Record<string, unknown> {
  return Object.fromEntries(Object.entries(args).map(([name, value]) => {
    if (typeof value === 'number') return [name, value + 1 + (random(name) % 97)];
    if (typeof value !== 'string') return [name, value];
    let i = 0;
    const redrawn = value.replace(/\d/g, () => String(random(`${name}:${i++}`) % 10));
    return [name, /\d/.test(value) ? redrawn : `${value}-${100 + (random(name) % 900)}`];
  }));
}

/** A planted task as an environment task: the question with the tools' system prompt, the answer, the planted record in info. */
export function plantedEnvironmentTask(task: PlantedTask): Task {
  return { prompt: [{ role: 'system', content: PLANTED_SYSTEM_PROMPT }, { role: 'user', content: task.question }], answer: task.answer, info: { planted: [task.planted], field: task.field, plantedId: task.id } };
}

/** A planted task with the solver's pass rates and the verdict. */
export interface VerifiedPlantedTask extends PlantedTask {
  /** Share of the solver's k attempts with the simulated tools that gave the planted answer. */
  toolPassRate: number;
  /** Share of its k attempts without any tool that did (the closed-book test). */
  closedBookPassRate: number;
  kept: boolean;
  rejection: 'answerable-without-tools' | 'unsolved-with-tools' | null;
}

/** What verification needs. */
export interface VerifyBackwardsOptions {
  tools: readonly ToolSchema[];
  records: readonly ToolRecord[];
  corrections?: readonly SimulatorCorrection[];
  /** The simulator model for calls other than the planted one. */
  simulator: ChatClient;
  simulatorModel?: string;
  solver: ChatClient;
  solverModel?: string;
  k: number;
  /** Reject a task passed without tools more often than this (default 0). */
  maxClosedBookPassRate?: number;
  /** Reject a task passed with tools less often than this (default 0.5). */
  minToolPassRate?: number;
  signal?: AbortSignal;
}

/** 1 when the reply's final answer matches the planted one after normalisation. */
function plantedAnswerReward(ctx: RewardContext): number {
  return answersMatch(completionText(ctx.completion), ctx.answer ?? '') ? 1 : 0;
}

/** Runs the closed-book test and the with-tools test on every planted task; see the module comment. */
export async function verifyBackwardsTasks(tasks: readonly PlantedTask[], options: VerifyBackwardsOptions): Promise<VerifiedPlantedTask[]> {
  if (tasks.length === 0) return [];
  const rubric = () => new Rubric({ funcs: [plantedAnswerReward] });
  const simulator = new ToolSimulator({ tools: options.tools, records: options.records, client: options.simulator, corrections: options.corrections ?? [], ...(options.simulatorModel !== undefined ? { model: options.simulatorModel } : {}) });
  const envTasks = tasks.map(plantedEnvironmentTask);
  const withTools = new SimulatedToolEnv({ name: 'planted-with-tools', dataset: envTasks, simulator, rubric: rubric(), maxTurns: 6 });
  const closedBook = new SingleTurnEnv({ name: 'planted-closed-book', dataset: envTasks, rubric: rubric() });
  const common = { rolloutsPerTask: options.k, ...(options.solverModel !== undefined ? { model: options.solverModel } : {}), ...(options.signal ? { signal: options.signal } : {}) };
  const open = await evaluate(withTools, options.solver, common);
  if (open.stoppedEarly) throw new Error(`the solver run with tools stopped: ${open.stoppedEarly}`);
  const closed = await evaluate(closedBook, options.solver, common);
  if (closed.stoppedEarly) throw new Error(`the closed-book solver run stopped: ${closed.stoppedEarly}`);
  const passRate = (records: typeof open.records, env: SingleTurnEnv | SimulatedToolEnv, index: number) => {
    const mine = records.filter((record) => record.taskIndex === index);
    return mine.length === 0 ? 0 : mine.filter((record) => env.isPassed(record)).length / mine.length;
  };
  return tasks.map((task, index) => {
    const toolPassRate = passRate(open.records, withTools, index);
    const closedBookPassRate = passRate(closed.records, closedBook, index);
    const rejection = closedBookPassRate > (options.maxClosedBookPassRate ?? 0) ? 'answerable-without-tools' : toolPassRate < (options.minToolPassRate ?? 0.5) ? 'unsolved-with-tools' : null;
    return { ...task, toolPassRate, closedBookPassRate, kept: rejection === null, rejection };
  });
}
