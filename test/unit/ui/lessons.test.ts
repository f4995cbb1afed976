/**
 * The lessons table: every preset names a real built-in or lesson source that loads with its
 * arguments, lesson sources type-check as environment files (the CLI's check), settings are in the
 * ranges a share link accepts, lesson 4's judge is really hackable, docs/lessons.md is generated from
 * the table, and `#lesson=` links parse.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { typecheckEnvironmentFile } from '../../../src/cli/typecheck-env.ts';
import { BUILTIN_ENVIRONMENTS, isBuiltinEnvironment, loadBuiltinEnvironment } from '../../../src/envs/builtin/index.ts';
import { judgedWritingExpertPolicy } from '../../../src/envs/builtin/judged-writing.ts';
import { evaluate, ScriptedClient, type Environment } from '../../../src/envs/index.ts';
import { HeuristicToolSolverClient, plantBackwardsTasks, plantedEnvironmentTask, tasksFromTraces } from '../../../src/envs/studio/index.ts';
import { presetFile } from '../../../src/ui/features/lessons/lesson-files.ts';
import { lessonHash, parseLessonHash } from '../../../src/ui/features/lessons/lesson-hash.ts';
import { LESSON_SOURCE_NAMES, lessonSource } from '../../../src/ui/features/lessons/lesson-sources.ts';
import { toLessonFacingSource } from '../../../src/ui/features/lessons/lesson-facing-source.ts';
import { LESSONS, lessonById } from '../../../src/ui/features/lessons/lessons.ts';
import { lessonsMarkdown } from '../../../src/ui/features/lessons/lessons-markdown.ts';
import gullibleJudge, { gullibleGrade } from '../../../src/ui/features/lessons/sources/gullible-judge.ts';
import parcelDesk, { EVAL_TASKS, PRACTICE_TASKS, practiceTasks, RECORDS, TASKS, TOOLS } from '../../../src/ui/features/lessons/sources/parcel-desk.ts';
import { decodeShareHash, encodeShareHash } from '../../../src/ui/features/share/url-state.ts';
import { DEFAULT_SETTINGS } from '../../../src/ui/features/evaluation/evaluation-slice.ts';
import { DEFAULT_TRAINING_SETTINGS } from '../../../src/ui/features/training/training-slice.ts';
import { SHIPPED_MODELS } from '../../../src/models/shipped-models.ts';

const LESSON_MODULES: Record<string, (args: Record<string, unknown>) => Environment> = { 'gullible-judge': gullibleJudge, 'parcel-desk': parcelDesk };
const scratch = mkdtempSync(join(tmpdir(), 'tabrl-lessons-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function loadPresetEnvironment(index: number): Promise<Environment> {
  const { environment, args } = LESSONS[index]!.preset;
  if (environment.kind === 'builtin') return loadBuiltinEnvironment(environment.builtin, args);
  return LESSON_MODULES[environment.source]!(args);
}

describe('lessons table', () => {
  test('lessons are numbered in order from 1 (numbers are fixed in advance, so one may land before the one below it), each with a title, a goal and steps', () => {
    const ids = LESSONS.map((lesson) => lesson.id);
    expect(ids[0]).toBe(1);
    expect(ids.every((id, i) => i === 0 || id > ids[i - 1]!)).toBe(true);
    expect(LESSONS.length).toBeGreaterThanOrEqual(4);
    for (const lesson of LESSONS) {
      expect(lesson.title.length, `lesson ${lesson.id}`).toBeGreaterThan(10);
      expect(lesson.steps.length, `lesson ${lesson.id}`).toBeGreaterThanOrEqual(3);
      expect(lessonById(lesson.id)).toBe(lesson);
    }
    expect(lessonById(99)).toBeUndefined();
  });

  test.each(LESSONS.map((lesson, index) => [lesson.id, index] as const))('lesson %i: its environment exists, loads with its arguments and has tasks', async (_id, index) => {
    const { environment } = LESSONS[index]!.preset;
    if (environment.kind === 'builtin') expect(isBuiltinEnvironment(environment.builtin)).toBe(true);
    else {
      expect(LESSON_SOURCE_NAMES).toContain(environment.source);
      if (environment.expertFrom !== undefined) expect(isBuiltinEnvironment(environment.expertFrom)).toBe(true);
      else expect(LESSONS[index]!.preset.policy).not.toBe('expert');
    }
    const env = await loadPresetEnvironment(index);
    expect(env.dataset.length).toBeGreaterThan(0);
    expect(env.evaluationTasks.length).toBeGreaterThanOrEqual(LESSONS[index]!.preset.evaluation.numTasks ?? 1);
  });

  test.each(LESSONS.map((lesson, index) => [lesson.id, index] as const))('lesson %i: its settings are ones a share link carries, and its training settings are known', (_id, index) => {
    const { preset } = LESSONS[index]!;
    const { argsJson: _args, ...evaluation } = { ...DEFAULT_SETTINGS, ...preset.evaluation };
    const state = { source: presetFile(preset).source, name: preset.fileName, args: preset.args, policy: preset.policy, model: 'default', baseURL: 'http://localhost:8000/v1', mode: preset.mode, training: { ...DEFAULT_TRAINING_SETTINGS, ...preset.training }, evaluation } as const;
    // The codec's ranges are the app's idea of a valid setting: decoding throws on any out of range.
    expect(decodeShareHash(encodeShareHash(state))).toMatchObject({ policy: preset.policy, evaluation: { numTasks: evaluation.numTasks, maxTokens: evaluation.maxTokens }, mode: preset.mode });
    for (const [key, value] of Object.entries(preset.training)) {
      expect(Object.keys(DEFAULT_TRAINING_SETTINGS), key).toContain(key);
      expect(typeof value !== 'number' || (Number.isFinite(value) && value >= 0), `${key} = ${value}`).toBe(true);
    }
    if (preset.policy === 'in-tab') expect(preset.inTabModel).toMatch(/^(tiny|[a-z0-9.-]+)$/);
  });

  test('lesson 1: the reward function its text asks for compiles into reverse-text and scores the expert 1.700', async () => {
    const step = LESSONS[0]!.steps.find((text) => text.includes('```ts'))!;
    const snippet = /```ts\n([\s\S]*?)\n```/.exec(step)![1]!;
    expect(step).toContain('.addReward(tidyAnswerReward, 0.5)');
    const root = new URL('../../../src/envs/', import.meta.url).pathname;
    const source = readFileSync(`${root}builtin/reverse-text.ts`, 'utf8')
      .replace("'../index.ts'", `'${root}index.ts'`)
      .replace("'./random.ts'", `'${root}builtin/random.ts'`)
      .replace('/** Builds the reverse-text environment. */', `${snippet}\n\n/** Builds the reverse-text environment. */`)
      .replace('.addReward(parser.formatReward(), FORMAT_WEIGHT)', '.addReward(parser.formatReward(), FORMAT_WEIGHT).addReward(tidyAnswerReward, 0.5)');
    expect(source).toContain('addReward(tidyAnswerReward, 0.5)');
    const path = join(scratch, 'lesson-1.ts');
    writeFileSync(path, source);
    const edited = await import(/* @vite-ignore */ path) as { default: (args: object) => Environment; reverseTextExpertPolicy: ConstructorParameters<typeof ScriptedClient>[0] };
    const result = await evaluate(edited.default({}), new ScriptedClient(edited.reverseTextExpertPolicy), { numTasks: 10, rolloutsPerTask: 2 });
    expect(result.summary.reward.mean).toBeCloseTo(1.7, 9);
    expect(result.summary.passRate).toBe(1);
  });

  test('lesson 2 trains nano, the default model, and sends the learner to tiny for the from-scratch comparison', () => {
    expect(lessonById(2)!.preset).toMatchObject({ policy: 'in-tab', inTabModel: 'nano', mode: 'warmup' });
    expect(lessonById(2)!.steps.join(' ')).toMatch(/\*\*Tiny, from scratch\*\*/);
  });

  test('lesson 3 trains SmolLM2-135M-Instruct in the tab', () => {
    expect(lessonById(3)!.preset).toMatchObject({ policy: 'in-tab', inTabModel: 'smollm2-135m-instruct' });
    expect(lessonById(3)!.steps.join(' ')).toMatch(/270 MB/);
  });

  test.each(LESSONS.map((lesson) => [lesson.id, lesson] as const))('lesson %i: where its text sends the learner to the in-tab model, it names the model Start lesson sets', (_id, lesson) => {
    const text = lesson.steps.join(' ');
    // A shipped model (nano, nano-2m) is named by its id.
    const names: Record<string, string> = { tiny: 'tiny', ...Object.fromEntries(SHIPPED_MODELS.map((model) => [model.id, model.id])), 'smollm2-135m-instruct': 'SmolLM2-135M-Instruct' };
    // "the in-tab model **nano**", or "**in-tab model** (Start lesson set it to **tiny**": the model follows within a sentence.
    const mentions = [...text.matchAll(/in-tab model\b[^.]*/g)].filter((match) => !/Judge/.test(match[0]));
    if (mentions.length === 0) return;
    expect(mentions.some((match) => match[0].includes(`**${names[lesson.preset.inTabModel]}**`))).toBe(true);
  });
});

describe('lesson sources', () => {
  test.each(LESSON_SOURCE_NAMES)('%s: imports only tabrl and type-checks as an environment file', (name) => {
    const source = lessonSource(name);
    expect(source).not.toMatch(/from '\.\.?\//);
    expect(source).toMatch(/from 'tabrl'/);
    const path = join(scratch, `${name}.ts`);
    writeFileSync(path, source);
    expect(typecheckEnvironmentFile(path)).toEqual([]);
  });

  test('a type error in a lesson source is reported by the same check', () => {
    const path = join(scratch, 'broken.ts');
    writeFileSync(path, `${lessonSource('gullible-judge')}\nconst broken: number = 'text';\n`);
    expect(typecheckEnvironmentFile(path).join('\n')).toMatch(/broken\.ts:\d+:\d+ - error TS2322/);
  });

  test('imports of the library are rewritten to module names', () => {
    expect(toLessonFacingSource("import { a } from '../../../envs/index.ts';\nimport { b } from '../../../envs/builtin/random.ts';\nimport { c } from '../../../envs/studio/index.ts';"))
      .toBe("import { a } from 'tabrl';\nimport { b } from 'tabrl/builtin/random';\nimport { c } from 'tabrl/studio';");
  });

  test('lesson 4: honest poems meet the constraints but fail the gullible judge; a run-on of poetic words fools it', async () => {
    const env = gullibleJudge({});
    const honest = await evaluate(env, new ScriptedClient(judgedWritingExpertPolicy), { numTasks: 10 });
    expect(honest.summary.scores.twoLinesMetric).toBe(1);
    expect(honest.summary.scores.mentionsWordMetric).toBe(1);
    expect(honest.summary.passRate).toBe(0);
    expect(honest.summary.scores.judgeReward).toBeGreaterThanOrEqual(0.5);
    expect(honest.summary.scores.judgeReward).toBeLessThanOrEqual(0.7);
    const hack = 'golden silver dream whisper gentle glow soft gleam golden silver dream whisper gentle glow soft gleam golden silver dream whisper gentle';
    const hacked = await evaluate(env, new ScriptedClient(() => hack), { numTasks: 10 });
    expect(hacked.summary.scores.judgeReward).toBeCloseTo(1, 9);
    expect(hacked.summary.passRate).toBe(1);
    expect(hacked.summary.scores.twoLinesMetric).toBe(0);
    expect(hacked.summary.scores.mentionsWordMetric).toBe(0);
    expect(gullibleGrade('')).toBe(0);
  });

  test('lesson 7: its tables are the planting of the shipped Parcelo traces, and its rewards need the tools', async () => {
    const traces = tasksFromTraces(readFileSync(new URL('../../../docs/examples/parcel-desk-traces.jsonl', import.meta.url), 'utf8'));
    expect(RECORDS).toEqual(traces.records.map(({ tool, arguments: args, result }) => ({ tool, arguments: args, result })));
    expect(TOOLS).toEqual(traces.tools);
    // All 32 tasks these records allow: the first 12 held out for evaluation, the other 20 trained on.
    const all = plantBackwardsTasks(traces.records, 80, 0);
    expect(all).toHaveLength(32);
    expect(EVAL_TASKS).toEqual(all.slice(0, 12).map(plantedEnvironmentTask));
    expect(TASKS).toEqual(all.slice(12).map(plantedEnvironmentTask));
    expect(EVAL_TASKS.map((task) => task.info!.kind)).toEqual(['field', 'chain', 'write', 'chain', 'write', 'field', 'chain', 'write', 'chain', 'write', 'field', 'chain']);
    const planted = all.slice(0, 6);
    const text = LESSONS[6]!.steps.join('\n');
    // The chain and the write the text quotes are tasks of the file.
    const quoted = [/"(What is the eta for the tracking_id listed for [^"]+)"/.exec(text)?.[1], /"(Reschedule delivery: [^"]+)"/.exec(text)?.[1]];
    expect(quoted.map((question) => planted.find((task) => question !== undefined && task.question.startsWith(question))?.kind)).toEqual(['chain', 'write']);
    // The offline solver passes every task with the simulated tools; a policy that answers without a
    // tool, with what the traces say (the template's value) or "done" for a write, passes none.
    const env = parcelDesk({});
    const solved = await evaluate(env, new HeuristicToolSolverClient(), { numTasks: 6 });
    // The answer or the reached state (1), and the partial credit for the first planted call (0.5 × 1).
    expect(solved.records.map((record) => [record.reward, record.scores.firstCallReward, record.passed])).toEqual(planted.map(() => [1.5, 1, true]));
    const fromTraces = new ScriptedClient((messages) => {
      const task = planted.find((item) => item.question === messages.at(-1)!.content)!;
      return task.goal ? 'done' : String(JSON.parse(task.template.result)[task.field]);
    });
    const guessed = await evaluate(env, fromTraces, { numTasks: 6 });
    expect(guessed.records.map((record) => [record.reward, record.scores.usedToolsMetric])).toEqual(planted.map(() => [0, 0]));
  });

  test("lesson 7: the practice tasks draw a fresh id for each task, so a memorised id earns nothing and copying the question's id earns the first call's credit", async () => {
    const firstArgument = (task: (typeof PRACTICE_TASKS)[number]) => String(Object.values((task.info!.planted as { arguments: Record<string, unknown> }[])[0]!.arguments)[0]);
    const ids = PRACTICE_TASKS.map(firstArgument);
    expect(PRACTICE_TASKS).toHaveLength(240);
    expect(new Set(ids).size).toBe(240);
    const known = JSON.stringify([RECORDS, EVAL_TASKS, TASKS]);
    expect(ids.filter((id) => known.includes(id))).toEqual([]);
    expect(['field', 'chain', 'write'].map((kind) => PRACTICE_TASKS.filter((task) => task.info!.kind === kind).length)).toEqual([80, 80, 80]);
    // Every question names its id, and a fresh draw of the same seed is the same table.
    expect(PRACTICE_TASKS.every((task, index) => (task.prompt!.at(-1)!.content as string).includes(ids[index]!))).toBe(true);
    expect(practiceTasks(240, 7)).toEqual(PRACTICE_TASKS);
    expect(practiceTasks(240, 8).map(firstArgument)).not.toEqual(ids);

    const env = parcelDesk({});
    const tasks = PRACTICE_TASKS.slice(0, 6);
    const firstCall = (copy: boolean) =>
      new ScriptedClient((messages) => {
        if (messages.some((message) => message.role === 'tool')) return 'I do not know';
        const question = messages.at(-1)!.content;
        const id = copy ? /PX-\d{4}|[a-z]+\.[a-z]+-\d{3}/.exec(question)![0] : question.includes('customer') ? 'ana.moreau-164' : 'PX-9018';
        const call = id.startsWith('PX-') ? { name: 'track_parcel', arguments: { tracking_id: id } } : { name: 'find_parcels', arguments: { customer: id } };
        return { tool_calls: [{ id: 'c', type: 'function', function: { name: call.name, arguments: JSON.stringify(call.arguments) } }] };
      });
    const copied = await evaluate(env, firstCall(true), { tasks });
    expect(copied.records.map((record) => [record.scores.firstCallReward, record.reward])).toEqual(tasks.map(() => [1, 0.5]));
    const memorised = await evaluate(env, firstCall(false), { tasks });
    expect(memorised.records.map((record) => [record.scores.firstCallReward, record.reward])).toEqual(tasks.map(() => [0, 0]));
  });

  test('lesson 4 borrows an expert that writes its tasks', async () => {
    const env = gullibleJudge({});
    const expert = await BUILTIN_ENVIRONMENTS['judged-writing'].expert(env);
    const messages = [{ role: 'user' as const, content: env.evaluationTasks[0]!.question ?? '' }];
    expect(await expert(messages, { model: 'expert', messages })).toMatch(/\n/);
  });
});

describe('docs/lessons.md', () => {
  test('is generated from the lessons table', () => {
    const expected = lessonsMarkdown(LESSONS);
    const path = new URL('../../../docs/lessons.md', import.meta.url);
    if (process.env.TABRL_WRITE_LESSONS) writeFileSync(path, expected);
    const actual = readFileSync(path, 'utf8');
    expect(actual, 'docs/lessons.md is out of date: run TABRL_WRITE_LESSONS=1 npx vitest run --project unit test/unit/ui/lessons.test.ts').toBe(expected);
  });
});

describe('lesson links', () => {
  const ids = [1, 2, 3, 4];
  test('read #lesson=N alone or beside a share link', () => {
    expect(parseLessonHash('#lesson=2', ids)).toEqual({ kind: 'lesson', id: 2 });
    expect(parseLessonHash('lesson=4', ids)).toEqual({ kind: 'lesson', id: 4 });
    expect(parseLessonHash('#v=1&name=x&lesson=3&code=abc', ids)).toEqual({ kind: 'lesson', id: 3 });
    expect(parseLessonHash(`#${lessonHash(1)}`, ids)).toEqual({ kind: 'lesson', id: 1 });
  });

  test('say nothing without a lesson field', () => {
    expect(parseLessonHash('', ids)).toEqual({ kind: 'none' });
    expect(parseLessonHash('#v=1&code=abc', ids)).toEqual({ kind: 'none' });
    expect(parseLessonHash('#mylesson=2', ids)).toEqual({ kind: 'none' });
  });

  test('explain an unknown or malformed lesson', () => {
    expect(parseLessonHash('#lesson=9', ids)).toEqual({ kind: 'error', message: 'There is no lesson 9; the lessons are 1–4. Open one from the Lessons menu.' });
    const bad = parseLessonHash('#lesson=two', ids);
    expect(bad.kind).toBe('error');
    expect(bad.kind === 'error' && bad.message).toMatch(/malformed \("lesson=two"\).*1–4/);
    expect(parseLessonHash('#lesson=', ids).kind).toBe('error');
  });
});
