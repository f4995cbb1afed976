// `tabrl validate` and `tabrl eval --state-columns` end to end through the real binary: a reference
// that fails is reported with a non-zero exit; state fields become top-level result columns; the
// metadata records the TabRL version and commit; a task planted backwards with a goal (a write) is
// played along its planted path and passes only when that path reaches the goal.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { expect, test } from 'vitest';
import { wordleExpertPolicy } from '../../../src/envs/builtin/wordle.ts';
import { plantBackwardsTasks, plantedEnvironmentTask, simulatedEnvironmentFile, tasksFromTraces } from '../../../src/envs/studio/index.ts';
import { withFakeOpenAIServer } from '../../support/fake-openai-server.ts';
import { readResults, runTabrl } from '../../support/tabrl-cli.ts';

const tabrl = (args: string[]) => runTabrl(args, { timeoutMs: 60_000 });

// Reverse a word, answer in <reversed> tags; the data of the third task has a wrong answer.
const ENV = `
import { SingleTurnEnv, Rubric, XMLParser, type RewardContext } from 'tabrl';

const parser = new XMLParser(['reversed']);
const words = ['stressed', 'drawer', 'live', 'star'];
const exactReward = (ctx: RewardContext) => (ctx.parser.parseAnswer(ctx.completion) === [...(ctx.info.word as string)].reverse().join('') ? 1 : 0);

export default function loadEnvironment(args: { broken?: boolean } = {}) {
  return new SingleTurnEnv({
    name: 'reverse-words',
    dataset: words.map((word, i) => ({ question: 'Reverse: ' + word, info: { word }, answer: args.broken && i === 2 ? 'live' : [...word].reverse().join('') })),
    parser,
    rubric: new Rubric({ funcs: [exactReward] }),
  });
}
`;

test('tabrl validate: reference answers in the parser’s format pass; a wrong one is named and the exit code is 1', { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tabrl-validate-'));
  const path = join(dir, 'env.ts');
  writeFileSync(path, ENV);
  const good = await tabrl(['validate', path]);
  expect(good.stderr).toBe('');
  expect(good.code).toBe(0);
  expect(good.stdout).toContain('reverse-words: the reference answers passed 4 of 4 tasks');

  const broken = await tabrl(['validate', path, '--env-args', '{"broken": true}', '--json']);
  expect(broken.code).toBe(1);
  const report = JSON.parse(broken.stdout);
  expect([report.tasks, report.passed]).toEqual([4, 3]);
  expect(report.failures).toEqual([expect.objectContaining({ split: 'train', taskIndex: 2, reward: 0, scores: { exactReward: 0 }, reply: '<reversed>\nlive\n</reversed>' })]);

  const noExpert = await tabrl(['validate', path, '--reference', 'expert']);
  expect(noExpert.code).toBe(2);
  expect(noExpert.stderr).toContain('only built-in environments');
});

test('tabrl validate: a built-in environment’s expert passes every task', { timeout: 120_000 }, async () => {
  const { code, stdout } = await tabrl(['validate', 'wordle', '-n', '5', '--split', 'train']);
  expect(code).toBe(0);
  expect(stdout).toContain('wordle: the expert passed 5 of 5 tasks');
});

test('tabrl eval --state-columns puts state fields at the top level of each line and saves them for --resume; metadata has the version and commit', { timeout: 120_000 }, async () => {
  await withFakeOpenAIServer(async (messages, request) => String(await wordleExpertPolicy(messages, request)), async (expert) => {
    const out = join(mkdtempSync(join(tmpdir(), 'tabrl-columns-')), 'run');
    const { code, stderr } = await tabrl(['eval', 'wordle', '--base-url', expert.baseURL, '--model', 'expert', '-n', '2', '--state-columns', 'won,guesses,missing', '--out', out]);
    expect(stderr).not.toContain('Error');
    expect(code).toBe(0);
    const lines = readResults(out);
    for (const line of lines) {
      expect(line.won).toBe(true);
      expect(line.guesses).toEqual(line.state.guesses);
      expect(line.guesses.length).toBeGreaterThan(0);
      expect(line.missing).toBeNull();
    }
    const metadata = JSON.parse(readFileSync(join(out, 'metadata.json'), 'utf8'));
    expect(metadata.state_columns).toEqual(['won', 'guesses', 'missing']);
    expect(metadata.tabrl_version).toBe(JSON.parse(readFileSync(fileURLToPath(new URL('../../../package.json', import.meta.url)), 'utf8')).version);
    expect(metadata.tabrl_commit === null || /^[0-9a-f]{40}$/.test(metadata.tabrl_commit)).toBe(true);
    const bad = await tabrl(['eval', 'wordle', '--base-url', expert.baseURL, '--model', 'expert', '--state-columns', 'won,a b']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--state-columns takes state field names separated by commas');
  });
});

test('tabrl validate: a planted write task passes when its reference path reaches the goal state, and fails when it does not', { timeout: 120_000 }, async () => {
  const { tools, records } = tasksFromTraces(readFileSync(fileURLToPath(new URL('../../../docs/examples/parcel-desk-traces.jsonl', import.meta.url)), 'utf8'));
  const tasks = plantBackwardsTasks(records, 3, 0).map(plantedEnvironmentTask);
  expect(tasks.map((task) => task.info!.kind)).toEqual(['field', 'chain', 'write']);
  const dir = mkdtempSync(join(tmpdir(), 'tabrl-validate-planted-'));
  // As JavaScript, so that each run skips the type check (studio-env-files.test.ts type-checks the file).
  const write = (name: string, list: typeof tasks) => {
    const source = simulatedEnvironmentFile({ name: 'planted', tasks: list, tools, records, scoring: 'exact' });
    writeFileSync(join(dir, name), ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText);
    return join(dir, name);
  };
  const good = await tabrl(['validate', write('env.mjs', tasks)]);
  expect(good.stderr).toBe('');
  expect(good.code).toBe(0);
  expect(good.stdout).toContain('planted: the reference answers and planted paths (1 task with a goal to reach) passed 3 of 3 tasks');

  // The goal asks for a date the planted path never writes: the state reached is not the goal.
  const goal = tasks[2]!.info!.goal as { tool: string; arguments: Record<string, unknown> };
  const unreachable = structuredClone(tasks);
  unreachable[2]!.info!.goal = { ...goal, arguments: { ...goal.arguments, date: '2026-04-30' } };
  const broken = await tabrl(['validate', write('unreachable.mjs', unreachable), '--json']);
  expect(broken.code).toBe(1);
  const report = JSON.parse(broken.stdout);
  expect([report.tasks, report.passed]).toEqual([3, 2]);
  expect(report.failures).toEqual([expect.objectContaining({ taskIndex: 2, reward: 0, scores: { exactMatchReward: 0, reachedStateReward: 0, usedToolsMetric: 1 }, reply: 'done' })]);
});
