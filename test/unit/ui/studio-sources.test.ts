/**
 * The studio's edits of environment source: criteria reviewed in the Audit panel are merged into a
 * file's rubric as a criteria judge (the edited lesson-4 file is compiled and run here, and each
 * criterion shows up as its own score), files it cannot edit get the snippet with the reason, and a
 * generated file's TASKS list is replaced by the learnable tasks.
 */
import { readFileSync } from 'node:fs';
import ts from 'typescript';
import { describe, expect, test } from 'vitest';
import * as tabrl from '../../../src/envs/index.ts';
import { evaluate, ScriptedClient, type Environment } from '../../../src/envs/index.ts';
import * as tabrlStudio from '../../../src/envs/studio/index.ts';
import { qaEnvironmentFile } from '../../../src/envs/studio/index.ts';
import { addCriteriaToSource } from '../../../src/ui/features/studio/criteria-source.ts';
import { withTasksList } from '../../../src/ui/features/studio/task-list.ts';

const GULLIBLE = readFileSync(new URL('../../../src/ui/features/lessons/sources/gullible-judge.ts', import.meta.url), 'utf8');
const CRITERIA = [
  { name: 'uses_word', question: 'Does the response use the word the task requires?', weight: 1 },
  { name: 'two_lines', question: "Does the response follow the task's 2-line constraint?", weight: 1 },
];

/** A policy that writes a poem with the word the task asks for (`uses the word "X"`). */
class PoemClient extends ScriptedClient {
  constructor(poem: (word: string) => string) {
    super((messages) => poem(/uses the word "([^"]+)"/.exec(messages.at(-1)?.content ?? '')?.[1] ?? ''));
  }
}

/** Compiles an environment file as the playground does (CommonJS, 'tabrl' and 'tabrl/studio' its only imports) and loads it. */
function loadSource(source: string, args: Record<string, unknown> = {}): Environment {
  const { outputText } = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: false } });
  const module = { exports: {} as Record<string, unknown> };
  const require = (name: string) => {
    // The lesson's file imports the API by its path in the repository; the playground maps it to 'tabrl'.
    if (name === 'tabrl' || name.endsWith('/envs/index.ts')) return tabrl;
    if (name === 'tabrl/studio') return tabrlStudio;
    throw new Error(`unexpected import ${name}`);
  };
  new Function('module', 'exports', 'require', outputText)(module, module.exports, require);
  return (module.exports.default as (args: Record<string, unknown>) => Environment)(args);
}

describe('adding criteria to an environment file', () => {
  test("lesson 4's file gets a criteria judge that gates the reward: the hack that passed now fails, an honest vivid poem still passes", async () => {
    const edit = addCriteriaToSource(GULLIBLE, CRITERIA);
    if (!edit.ok) throw new Error(edit.reason);
    expect(edit.source).toContain("import { CriteriaRubric, gateByCriteria, HeuristicStudioClient } from 'tabrl/studio';");
    expect(edit.source.indexOf('gateByCriteria(rubric, new CriteriaRubric(')).toBeLessThan(edit.source.indexOf('return new SingleTurnEnv('));
    const before = loadSource(GULLIBLE, { numEvalTasks: 2 });
    const after = loadSource(edit.source, { numEvalTasks: 2 });
    expect(after.rubric.rewards.map((reward) => reward.name)).toEqual(['judgeReward', 'mentionsWordMetric', 'twoLinesMetric', 'criterion_uses_word', 'criterion_two_lines']);
    expect(after.rubric.rewardNames).toEqual(['judgeReward', 'criterion_uses_word', 'criterion_two_lines']);
    // The hack: one long line of poetic words, no required word. The gullible judge pays it 1.0.
    const hack = 'Golden dreams whisper softly, gentle silver gleams glow in golden dreams and soft gentle whispers forever and ever in the golden night';
    const hacked = await evaluate(before, new ScriptedClient([hack]), { numTasks: 2 });
    expect(hacked.records.map((record) => [record.reward, record.passed])).toEqual([[1, true], [1, true]]);
    const caught = await evaluate(after, new ScriptedClient([hack]), { numTasks: 2 });
    expect(caught.records.every((record) => record.scores.judgeReward === 1)).toBe(true);
    expect(caught.records.every((record) => record.scores.criterion_uses_word === 0 && record.scores.criterion_two_lines === 0)).toBe(true);
    expect(caught.records.map((record) => [record.reward, record.passed])).toEqual([[0, false], [0, false]]);
    expect(caught.records.every((record) => record.errors.length === 0)).toBe(true);
    // An honest poem (two lines, the task's word) that the judge also likes: 5 length points + 4 poetic words = 0.9, before and after.
    const honest = new PoemClient((word) => `Golden ${word} light glows soft upon the quiet street,\nGentle silver whispers dream where ${word} and rain meet.`);
    for (const env of [before, after]) {
      const { records } = await evaluate(env, honest, { numTasks: 2 });
      expect(records.map((record) => [record.scores.judgeReward, record.reward, record.passed])).toEqual([[0.9, 0.9, true], [0.9, 0.9, true]]);
    }
  });

  test('a file without a rubric variable or a judge from args gets the snippet and the reason', () => {
    const noRubric = addCriteriaToSource("import { SingleTurnEnv } from 'tabrl';\nexport default function loadEnvironment() {\n  return new SingleTurnEnv({ name: 'x', dataset: [] });\n}\n", CRITERIA);
    expect(noRubric).toMatchObject({ ok: false, reason: expect.stringContaining('no `rubric` variable') });
    const exact = addCriteriaToSource(qaEnvironmentFile([{ question: 'q', answer: 'a' }]), CRITERIA);
    expect(exact).toMatchObject({ ok: false, reason: expect.stringContaining('takes no judge from args') });
    if (!exact.ok) expect(exact.snippet).toContain('"name": "uses_word"');
    expect(addCriteriaToSource(GULLIBLE, [])).toMatchObject({ ok: false, reason: 'no criteria were accepted' });
  });

  test('a generated judge-scored file gets the criteria too, and still loads', () => {
    const source = qaEnvironmentFile([{ question: 'Capital of France?', answer: 'Paris' }], { scoring: 'judge' });
    const edit = addCriteriaToSource(source, CRITERIA);
    if (!edit.ok) throw new Error(edit.reason);
    const env = loadSource(edit.source, { judgeClient: new ScriptedClient(['yes']) });
    expect(env.rubric.rewards.map((reward) => reward.name)).toContain('criterion_two_lines');
  });
});

describe('the learnable tasks of a generated file', () => {
  test("replaces the TASKS list and keeps the rest; a file without one is left alone", () => {
    const source = qaEnvironmentFile([{ question: 'a?', answer: '1' }, { question: 'b?', answer: '2' }, { question: 'c?', answer: '3' }]);
    const filtered = withTasksList(source, [{ question: 'b?', answer: '2' }]);
    expect(filtered).toBeDefined();
    const env = loadSource(filtered!);
    expect(env.dataset.map((task) => task.question)).toEqual(['b?']);
    expect(filtered!.replace(/export const TASKS[\s\S]*?\n\];/, '')).toBe(source.replace(/export const TASKS[\s\S]*?\n\];/, ''));
    expect(withTasksList(GULLIBLE, [])).toBeUndefined();
  });
});
