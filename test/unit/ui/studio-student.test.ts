/**
 * Lesson 5's offline path end to end in Node: the sample document → the studio's heuristic
 * generator and solver → the generated environment file (compiled and loaded as the playground
 * does) → calibration against the scripted student, whose rule gives exact labels by kind of answer.
 */
import ts from 'typescript';
import { describe, expect, test } from 'vitest';
import * as tabrl from '../../../src/envs/index.ts';
import { type Environment } from '../../../src/envs/index.ts';
import * as tabrlStudio from '../../../src/envs/studio/index.ts';
import { calibrate, createHeuristicStudioClients, keptTasks, qaEnvironmentFile, synthesizeTasks } from '../../../src/envs/studio/index.ts';
import { SAMPLE_DOCUMENT } from '../../../src/ui/features/studio/sample-document.ts';
import { scriptedStudent, studentKnows } from '../../../src/ui/features/studio/scripted-student.ts';
import { tasksFromSource } from '../../../src/ui/features/studio/task-list.ts';

function loadSource(source: string): Environment {
  const { outputText } = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } });
  const module = { exports: {} as Record<string, unknown> };
  new Function('module', 'exports', 'require', outputText)(module, module.exports, (name: string) => (name === 'tabrl/studio' ? tabrlStudio : tabrl));
  return (module.exports.default as (args: Record<string, unknown>) => Environment)({});
}

describe('the scripted student', () => {
  test('knows numbers always, capitalised names half the time, other answers never', () => {
    expect([studentKnows('1794'), studentKnows('Wren'), studentKnows('breakwater'), studentKnows('paper lanterns')]).toEqual([1, 0.5, 0, 0]);
  });

  test("calibrating the sample document's generated environment against it labels each task by its kind of answer", async () => {
    const { generator, solver } = createHeuristicStudioClients();
    const { tasks, report } = await synthesizeTasks({ documents: [SAMPLE_DOCUMENT], generator, solver, k: 2 });
    expect(report.kept).toBeGreaterThanOrEqual(6);
    // Invented facts: the solver answers every kept question with the passage and none without it.
    expect(report.meanOpenBookPassRate).toBe(1);
    expect(report.meanClosedBookPassRate).toBe(0);
    const source = qaEnvironmentFile(keptTasks(tasks), { name: 'studio-tasks' });
    const fileTasks = tasksFromSource(source)!;
    expect(fileTasks.map((task) => task.question)).toEqual(keptTasks(tasks).map((task) => task.question));
    const env = loadSource(source);
    const result = await calibrate(env, scriptedStudent(fileTasks, 0), { rolloutsPerTask: 8, tasks: env.dataset, concurrency: 1 });
    const expected = (answer: string) => ({ 1: 'too-easy', 0.5: 'learnable', 0: 'too-hard' })[studentKnows(answer) as 1 | 0.5 | 0];
    expect(result.tasks.map((task) => task.label)).toEqual(result.tasks.map((task) => expected(task.answer ?? '')));
    expect(result.counts['too-easy']).toBeGreaterThan(0);
    expect(result.counts.learnable).toBeGreaterThan(0);
    expect(result.counts['too-hard']).toBeGreaterThan(0);
  });
});
