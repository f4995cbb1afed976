import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { ScriptedClient, type Message } from '../../../../src/envs/index.ts';
import { canonicalJson, HeuristicToolSolverClient, plantBackwardsTasks, plantedEnvironmentTask, ScriptedSimulatorClient, SimulatedToolEnv, tasksFromTraces, ToolSimulator, verifyBackwardsTasks, type PlantedTask } from '../../../../src/envs/studio/index.ts';

const TRACES = tasksFromTraces(readFileSync(fileURLToPath(new URL('../../../../docs/examples/parcel-desk-traces.jsonl', import.meta.url)), 'utf8'));
const { tools, records } = TRACES;
const simulator = () => new ScriptedSimulatorClient();

/** A solver that calls the planted tool, then answers with `pick(task)`; without tools it says it does not know. */
function answering(pick: (task: PlantedTask) => string, tasks: readonly PlantedTask[]) {
  return new ScriptedClient((messages: Message[], request) => {
    const task = tasks.find((candidate) => candidate.question === messages.find((message) => message.role === 'user')!.content)!;
    if (!request.tools || request.tools.length === 0) return 'I do not know.';
    if (!messages.some((message) => message.role === 'tool')) return { tool_calls: [{ id: 'c', type: 'function', function: { name: task.planted.tool, arguments: JSON.stringify(task.planted.arguments) } }] };
    return pick(task);
  });
}

describe('tasks planted backwards', () => {
  const planted = plantBackwardsTasks(records, 6, 3, ['field']);

  test('plant new calls no record made, with a planted value the template did not hold; seeded', () => {
    expect(planted).toHaveLength(6);
    const recorded = new Set(records.map((record) => `${record.tool}${canonicalJson(record.arguments)}`));
    for (const task of planted) {
      expect(recorded.has(`${task.planted.tool}${canonicalJson(task.planted.arguments)}`)).toBe(false);
      expect(JSON.parse(task.planted.result)[task.field]).toBe(task.answer);
      expect(JSON.parse(task.template.result)[task.field]).not.toBe(task.answer);
      expect(task.question).toContain(String(Object.values(task.planted.arguments)[0]));
    }
    expect(plantBackwardsTasks(records, 6, 3, ['field'])).toEqual(planted);
    expect(plantBackwardsTasks(records, 6, 4, ['field'])).not.toEqual(planted);
  });

  test('the simulated backend answers the planted call with the planted record, and other calls from the traces', async () => {
    const task = planted[0]!;
    const env = new SimulatedToolEnv({ name: 'planted', dataset: [plantedEnvironmentTask(task)], simulator: new ToolSimulator({ tools, records, client: simulator() }) });
    const probe = new ScriptedClient([{ tool_calls: [{ id: 'a', type: 'function', function: { name: task.planted.tool, arguments: JSON.stringify(task.planted.arguments) } }, { id: 'b', type: 'function', function: { name: task.template.tool, arguments: JSON.stringify(task.template.arguments) } }] }, 'done']);
    const trajectory = await env.rollout(probe, env.dataset[0]!);
    expect(trajectory.completion.filter((message) => message.role === 'tool').map((message) => message.content)).toEqual([task.planted.result, task.template.result]);
  });

  test('the reward passes the planted answer and fails others (the value in the traces, a wrong one)', async () => {
    const verify = (solver: ScriptedClient | HeuristicToolSolverClient) => verifyBackwardsTasks(planted, { tools, records, simulator: simulator(), solver, k: 2 });
    const right = await verify(answering((task) => `Answer: ${task.answer}`, planted));
    expect(right.map((task) => [task.toolPassRate, task.closedBookPassRate, task.kept])).toEqual(planted.map(() => [1, 0, true]));
    const fromTraces = await verify(answering((task) => String(JSON.parse(task.template.result)[task.field]), planted));
    expect(fromTraces.map((task) => [task.toolPassRate, task.kept, task.rejection])).toEqual(planted.map(() => [0, false, 'unsolved-with-tools']));
    const heuristic = await verify(new HeuristicToolSolverClient());
    expect(heuristic.every((task) => task.kept && task.toolPassRate === 1)).toBe(true);
  });

  test('tasks the solver passes without calling a tool are rejected; the pass rates are kept', async () => {
    const known = new Set(planted.slice(0, 2).map((task) => task.question));
    // A solver that has the answer to two tasks memorised, and looks the others up.
    const solver = new ScriptedClient((messages: Message[], request) => {
      const question = messages.find((message) => message.role === 'user')!.content;
      const task = planted.find((candidate) => candidate.question === question)!;
      if (known.has(question)) return task.answer;
      if (!request.tools || request.tools.length === 0) return 'I do not know.';
      if (!messages.some((message) => message.role === 'tool')) return { tool_calls: [{ id: 'c', type: 'function', function: { name: task.planted.tool, arguments: JSON.stringify(task.planted.arguments) } }] };
      return task.answer;
    });
    const verified = await verifyBackwardsTasks(planted, { tools, records, simulator: simulator(), solver, k: 3 });
    expect(verified.map((task) => [task.closedBookPassRate, task.toolPassRate, task.rejection])).toEqual(planted.map((task) => (known.has(task.question) ? [1, 1, 'answerable-without-tools'] : [0, 1, null])));
  });
});
