/**
 * Richer planting over the shipped Parcelo traces: a record reached by a sequence of calls (a new
 * customer whose listing names a new tracking id, whose record holds the planted value) and a state
 * reached by a write (the goal reschedule, checked on the state the episode reached). The rewards of
 * the generated environment file pass the planted answer / reached state and fail the others; tasks
 * a solver passes without tools are still rejected.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, test } from 'vitest';
import * as tabrl from '../../../../src/envs/index.ts';
import { evaluate, ScriptedClient, type ChatClient, type Environment, type Message } from '../../../../src/envs/index.ts';
import * as studio from '../../../../src/envs/studio/index.ts';
import {
  canonicalJson,
  HeuristicToolSolverClient,
  plantBackwardsTasks,
  plantedEnvironmentTask,
  ScriptedSimulatorClient,
  simulatedEnvironmentFile,
  tasksFromTraces,
  verifyBackwardsTasks,
  type PlantedTask,
} from '../../../../src/envs/studio/index.ts';

const { tools, records } = tasksFromTraces(readFileSync(fileURLToPath(new URL('../../../../docs/examples/parcel-desk-traces.jsonl', import.meta.url)), 'utf8'));
const recordedText = records.map((record) => `${JSON.stringify(record.arguments)} ${record.result}`).join('\n');

/** The environment file synth --backwards writes for `tasks`, compiled as the playground compiles it. */
function plantedEnvironment(tasks: readonly PlantedTask[]): Environment {
  const source = simulatedEnvironmentFile({ name: 'planted', tasks: tasks.map(plantedEnvironmentTask), tools, records, scoring: 'exact' });
  const { outputText } = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } });
  const module = { exports: {} as Record<string, unknown> };
  new Function('module', 'exports', 'require', outputText)(module, module.exports, (name: string) => (name === 'tabrl' ? tabrl : name === 'tabrl/studio' ? studio : undefined));
  return (module.exports.default as (args: Record<string, unknown>) => Environment)({});
}

/** A policy that makes `calls` in order (one per turn), then replies `reply`. */
function calling(calls: { name: string; args: Record<string, unknown> }[], reply: string): ChatClient {
  return new ScriptedClient([...calls.map((call, i) => ({ tool_calls: [{ id: `c${i}`, type: 'function' as const, function: { name: call.name, arguments: JSON.stringify(call.args) } }] })), reply]);
}

const rewardOf = async (env: Environment, policy: ChatClient) => (await evaluate(env, policy, { numTasks: 1 })).records[0]!.reward;

describe('planting a record reached by a sequence of calls, and a state reached by a write', () => {
  const planted = plantBackwardsTasks(records, 6, 0);
  const chain = planted.find((task) => task.kind === 'chain')!;
  const write = planted.find((task) => task.kind === 'write')!;

  test('the kinds take turns; chains plant a new entry and a new id no trace holds, consistently; seeded', () => {
    // Turn by turn; a draw that cannot be planted passes its turn on.
    expect(planted.map((task) => task.kind)).toEqual(['field', 'chain', 'write', 'chain', 'write', 'field']);
    for (const task of planted.filter((candidate) => candidate.kind !== 'field')) {
      const [listing, read] = task.records as [studio.ToolRecord, studio.ToolRecord];
      expect(listing.tool).toBe('find_parcels');
      const id = read.arguments.tracking_id as string;
      // The listing names exactly the new id, which no recorded call or result holds.
      expect(JSON.parse(listing.result).parcels.map((parcel: { tracking_id: string }) => parcel.tracking_id)).toEqual([id]);
      expect(recordedText).not.toContain(id);
      expect(recordedText).not.toContain(`"${listing.arguments.customer as string}"`);
      expect(task.question).toContain(listing.arguments.customer as string);
      expect(task.question).not.toContain(id);
    }
    expect(JSON.parse(chain.planted.result)[chain.field]).toBe(chain.answer);
    expect(JSON.parse(chain.template.result)[chain.field]).not.toBe(chain.answer);
    expect(write.goal).toEqual({ tool: 'reschedule_delivery', arguments: { tracking_id: write.records[1]!.arguments.tracking_id, date: expect.stringMatching(/^2026-03-\d\d$/) } });
    expect(plantBackwardsTasks(records, 6, 0)).toEqual(planted);
    expect(plantBackwardsTasks(records, 4, 0, ['chain']).map((task) => task.kind)).toEqual(['chain', 'chain', 'chain', 'chain']);
  });

  test('a chain: the reward passes the planted answer read through both calls, and fails the value in the traces', async () => {
    const env = plantedEnvironment([chain]);
    const [listing, read] = chain.records as [studio.ToolRecord, studio.ToolRecord];
    const both = [{ name: listing.tool, args: listing.arguments }, { name: read.tool, args: read.arguments }];
    expect(await rewardOf(env, calling(both, chain.answer))).toBe(1);
    expect(await rewardOf(env, new HeuristicToolSolverClient())).toBe(1);
    expect(await rewardOf(env, calling(both, String(JSON.parse(chain.template.result)[chain.field])))).toBe(0);
    // Reading a recorded parcel instead of the listed one gives the traces' record, not the planted one.
    expect(await rewardOf(env, calling([{ name: read.tool, args: chain.template.arguments }], String(JSON.parse(chain.template.result)[chain.field])))).toBe(0);
  });

  test('a write: the reward checks the state the episode reached, not the reply', async () => {
    const env = plantedEnvironment([write]);
    const goal = write.goal!;
    const listing = write.records[0]!;
    const find = { name: listing.tool, args: listing.arguments };
    const reschedule = (args: Record<string, unknown>) => ({ name: goal.tool, args });
    expect(await rewardOf(env, calling([find, reschedule(goal.arguments)], 'done'))).toBe(1);
    expect(await rewardOf(env, new HeuristicToolSolverClient())).toBe(1);
    expect(await rewardOf(env, new ScriptedClient(['done']))).toBe(0);
    expect(await rewardOf(env, calling([find, reschedule({ ...goal.arguments, date: '2026-04-01' })], 'done'))).toBe(0);
    // Reaching the goal and then writing another date over it leaves the other date.
    expect(await rewardOf(env, calling([find, reschedule(goal.arguments), reschedule({ ...goal.arguments, date: '2026-04-01' })], 'done'))).toBe(0);
    // The same date written to a recorded parcel is not the planted one's state.
    expect(await rewardOf(env, calling([reschedule({ ...goal.arguments, tracking_id: 'PX-1004' })], 'done'))).toBe(0);
  });

  test('verification keeps the chains and writes the solver reaches with tools, and rejects what it passes without them', async () => {
    const simulator = new ScriptedSimulatorClient();
    const heuristic = await verifyBackwardsTasks(planted, { tools, records, simulator, solver: new HeuristicToolSolverClient(), k: 2 });
    expect(heuristic.map((task) => [task.kind, task.toolPassRate, task.closedBookPassRate, task.rejection])).toEqual(planted.map((task) => [task.kind, 1, 0, null]));
    // A solver that knows the chain's answer by heart passes it closed-book: rejected. A write cannot be done without a tool.
    const memorised = new ScriptedClient((messages: Message[], request) => {
      const question = messages.find((message) => message.role === 'user')!.content;
      if (question === chain.question || question === write.question) return question === chain.question ? chain.answer : 'done';
      return new HeuristicToolSolverClient().chat.completions.create({ ...request, messages }).then((completion) => completion.choices[0]!.message);
    });
    const verified = await verifyBackwardsTasks([chain, write], { tools, records, simulator, solver: memorised, k: 2 });
    expect(verified.map((task) => [task.closedBookPassRate, task.rejection])).toEqual([[1, 'answerable-without-tools'], [0, 'unsolved-with-tools']]);
    expect(canonicalJson(verified[1]!.goal)).toBe(canonicalJson(write.goal));
  });
});
