// The studio commands end to end: the real `tabrl` binary against the fake OpenAI server, whose
// models play the studio's roles by rule (the library's offline heuristic clients).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { evaluate, ScriptedClient, type ChatRequest, type Message } from '../../../src/envs/index.ts';
import { HeuristicStudioClient } from '../../../src/envs/studio/index.ts';
import { recordsToJsonl } from '../../../src/envs/results-record.ts';
import loadGullibleJudge from '../../../src/ui/features/lessons/sources/gullible-judge.ts';
import { judgedWritingExpertPolicy } from '../../../src/envs/builtin/judged-writing.ts';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../../support/fake-openai-server.ts';
import { runTabrl } from '../../support/tabrl-cli.ts';

const BIN = fileURLToPath(new URL('../../../bin/tabrl.mjs', import.meta.url));

const tabrl = (args: string[], env: Record<string, string> = {}) => runTabrl(args, { env, timeoutMs: 90_000 });
const jsonl = (path: string) => readFileSync(path, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
const json = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
/** Runs tabrl and sends it Ctrl-C (SIGINT) once `file` holds `lines` lines; resolves with its exit code and stderr. */
function tabrlInterrupted(args: string[], file: string, lines: number): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setInterval(() => {
      const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
      if (text.split('\n').length - 1 >= lines) {
        clearInterval(timer);
        child.kill('SIGINT');
      }
    }, 20);
    child.on('close', (code) => {
      clearInterval(timer);
      resolve({ code, stderr });
    });
  });
}
/** One line of stderr: the error message, no stack. */
const lastLine = (text: string) => text.trim().split('\n').at(-1)!;

const STATION = '# The station\n\nThe research station was founded in 1957 by Margaret Holt.\n\nIts generator burns diesel through the long polar winter.\n';
const ROLES = { gen: new HeuristicStudioClient('generator'), solver: new HeuristicStudioClient('solver'), judge: new HeuristicStudioClient('judge') };
const QUARTERS: Record<string, number> = { always: 4, never: 0, half: 2, quarter: 1 };
const seen = new Map<string, number>();
const charCodeSum = (text: string) => [...text].reduce((sum, char) => sum + char.charCodeAt(0), 0);

let server: FakeOpenAIServer;
let dir: string;
beforeAll(async () => {
  server = await startFakeOpenAIServer(async (messages: Message[], request: ChatRequest) => {
    const role = ROLES[request.model as keyof typeof ROLES];
    if (role) return (await role.chat.completions.create(request)).choices[0]!.message.content;
    if (request.model === 'prose') return 'I would rather write an essay about this passage.';
    if (request.model === 'knows-1957') return 'Answer: 1957';
    if (request.model.startsWith('slow-')) {
      // The same role a beat later, so that a run can be interrupted halfway.
      await new Promise((wait) => setTimeout(wait, 250));
      const slow = request.model.slice('slow-'.length);
      if (slow === 'reverser') return [...messages.at(-1)!.content].reverse().join('');
      return (await ROLES[slow as keyof typeof ROLES].chat.completions.create({ ...request, model: slow })).choices[0]!.message.content;
    }
    if (request.model === 'reverses-even') {
      // Compact reverse-text: reverses a text whose character codes sum to an even number on its first try only, never an odd one.
      const text = messages.at(-1)!.content;
      const n = seen.get(text) ?? 0;
      seen.set(text, n + 1);
      return n === 0 && charCodeSum(text) % 2 === 0 ? [...text].reverse().join('') : 'no idea';
    }
    if (request.model === 'quarters') {
      // Passes "always" 4 times, "half" 2, "quarter" 1, "never" 0, in whatever order the calls come.
      const question = messages.at(-1)!.content;
      const n = seen.get(question) ?? 0;
      seen.set(question, n + 1);
      return n < (QUARTERS[question] ?? 0) ? 'right' : 'wrong';
    }
    return { status: 404, body: { error: { message: `no model ${request.model}` } } };
  });
  dir = mkdtempSync(join(tmpdir(), 'tabrl-studio-'));
  writeFileSync(join(dir, 'station.md'), STATION);
  writeFileSync(join(dir, 'empty.txt'), '\n  \n');
});
afterAll(() => server.close());

const models = (generator = 'gen') => ['--generator-base-url', server.baseURL, '--generator-model', generator, '--solver-base-url', server.baseURL, '--solver-model', 'solver'];

describe('tabrl synth', () => {
  test('writes every candidate, the report and an env.ts that runs with tabrl eval', { timeout: 120_000 }, async () => {
    const out = join(dir, 'synth');
    const run = await tabrl(['synth', join(dir, 'station.md'), ...models(), '-k', '2', '--out', out]);
    expect(run.stderr).toContain('wrote 2 candidates');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('candidates 2: kept 2, rejected 0');
    // Candidates are written as their solver calls finish, so the file's order is not fixed.
    const lines = jsonl(join(out, 'tasks.jsonl')).sort((a, b) => String(a.answer).localeCompare(String(b.answer)));
    expect(lines.map((line) => [line.answer, line.kept, line.openBookPassRate, line.closedBookPassRate])).toEqual([['1957', true, 1, 0], ['generator', true, 1, 0]]);
        // One chunk: the whole document but its final newline.
    const end = STATION.trimEnd().length;
    expect(lines[0]!.source).toEqual({ document: join(dir, 'station.md'), start: 0, end, chunk: `${join(dir, 'station.md')}#0-${end}` });
    expect(json(join(out, 'report.json'))).toMatchObject({ status: 'completed', candidates: 2, kept: 2, calls: { generator: 1, solver: 8, judge: 0 } });

    const evalOut = join(dir, 'synth-eval');
    const evaluation = await tabrl(['eval', join(out, 'env.ts'), '--base-url', server.baseURL, '--model', 'knows-1957', '--out', evalOut]);
    expect(evaluation.stderr).toContain('wrote 2 rollouts');
    expect(evaluation.code).toBe(0);
    const rewardByAnswer = Object.fromEntries(jsonl(join(evalOut, 'results.jsonl')).map((line) => [line.answer, line.reward]));
    expect(rewardByAnswer).toEqual({ '1957': 1, generator: 0 });
    // A second run into the same folder is refused, nothing replaced.
    const again = await tabrl(['synth', join(dir, 'station.md'), ...models(), '--out', out]);
    expect(again.code).toBe(2);
    expect(lastLine(again.stderr)).toContain('already holds tasks.jsonl, report.json, env.ts; pass --overwrite');
  });

  test('bad input: an empty document, a missing role, replies that are not JSON, an unreachable generator', { timeout: 120_000 }, async () => {
    const empty = await tabrl(['synth', join(dir, 'station.md'), join(dir, 'empty.txt'), ...models(), '--out', join(dir, 'synth-empty')]);
    expect(empty.code).toBe(2);
    expect(lastLine(empty.stderr)).toBe(`tabrl synth: document ${join(dir, 'empty.txt')} is empty: it holds no text to make tasks from`);

    const missing = await tabrl(['synth', join(dir, 'station.md'), '--generator-base-url', server.baseURL, '--generator-model', 'gen', '--out', join(dir, 'synth-missing')]);
    expect(missing.code).toBe(2);
    expect(lastLine(missing.stderr)).toContain('--solver-model is required');

    const prose = await tabrl(['synth', join(dir, 'station.md'), ...models('prose'), '--out', join(dir, 'synth-prose')]);
    expect(prose.code).toBe(0);
    expect(prose.stdout).toContain('candidates 1: kept 0, rejected 1 (malformed 1)');
    expect(prose.stderr).toContain('no task was kept; 1 generator replies or items could not be read, the first: the reply is not JSON');
    expect(jsonl(join(dir, 'synth-prose', 'tasks.jsonl'))[0]).toMatchObject({ kept: false, rejection: 'malformed', reason: expect.stringContaining('the reply is not JSON') });
    expect(existsSync(join(dir, 'synth-prose', 'env.ts'))).toBe(false);

    const gone = await startFakeOpenAIServer(() => 'unused');
    const url = gone.baseURL;
    await gone.close();
    const out = join(dir, 'synth-unreachable');
    const unreachable = await tabrl(['synth', join(dir, 'station.md'), '--generator-base-url', url, '--generator-model', 'gen', '--solver-base-url', url, '--solver-model', 'solver', '--timeout', '2', '--out', out]);
    expect(unreachable.code).toBe(1);
    expect(lastLine(unreachable.stderr)).toMatch(/^tabrl synth: stopped: the generator failed: /);
    expect(json(join(out, 'report.json'))).toMatchObject({ status: 'failed', candidates: 1, rejections: { error: 1 } });
  });

  test('Ctrl-C stops it with exit code 130, says so, and keeps every candidate decided so far', { timeout: 120_000 }, async () => {
    const out = join(dir, 'synth-interrupted');
    const run = await tabrlInterrupted(['synth', join(dir, 'station.md'), '--generator-base-url', server.baseURL, '--generator-model', 'gen', '--solver-base-url', server.baseURL, '--solver-model', 'slow-solver', '-k', '2', '--questions-per-chunk', '3', '-c', '1', '--out', out], join(out, 'tasks.jsonl'), 1);
    expect(run.code).toBe(130);
    expect(run.stderr).toContain('interrupted: tasks.jsonl holds every candidate decided so far');
    const lines = jsonl(join(out, 'tasks.jsonl'));
    expect(lines.length).toBeGreaterThanOrEqual(1);
    expect(lines[0]).toMatchObject({ answer: '1957', kept: true });
    expect(json(join(out, 'report.json'))).toMatchObject({ status: 'interrupted' });
    expect(run.stderr).toContain(`wrote ${lines.length} candidates to ${join(out, 'tasks.jsonl')}`);
  });

  test('offline: --<role>-model heuristic needs no endpoint', { timeout: 60_000 }, async () => {
    const out = join(dir, 'synth-offline');
    const run = await tabrl(['synth', join(dir, 'station.md'), '--generator-model', 'heuristic', '--solver-model', 'heuristic', '--judge-model', 'heuristic', '-k', '2', '--out', out]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('candidates 2: kept 2, rejected 0');
    expect(json(join(out, 'report.json'))).toMatchObject({ calls: { generator: 1, solver: 8, judge: 8 }, groundingGap: 1 });
    expect(readFileSync(join(out, 'env.ts'), 'utf8')).toContain('new JudgeRubric');
  });

  test('--help', async () => {
    const help = await tabrl(['synth', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--generator-model NAME');
    expect(help.stdout).toContain('--solver-api-key-env VAR');
  });
});

describe('tabrl tasks from-traces', () => {
  test('dedupes, reports malformed lines by number, drafts criteria with a judge', { timeout: 60_000 }, async () => {
    const file = join(dir, 'traces.jsonl');
    writeFileSync(file, [
      JSON.stringify({ messages: [{ role: 'user', content: 'Write a two-line poem that uses the word "salt".' }, { role: 'assistant', content: 'Salt on the wind,\nsalt on my skin.' }] }),
      '{"messages": [',
      JSON.stringify({ messages: [{ role: 'user', content: 'Write a two-line poem that uses the word "salt".' }, { role: 'assistant', content: 'Another.' }] }),
      JSON.stringify({ prompt: [{ role: 'user', content: 'Summarise the memo.' }], completion: [{ role: 'assistant', content: 'It says hi.' }], reward: 1 }),
    ].join('\n'));
    const out = join(dir, 'traces');
    const run = await tabrl(['tasks', 'from-traces', file, '--judge-base-url', server.baseURL, '--judge-model', 'judge', '--out', out]);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(`${file}:2: skipped: not JSON`);
    expect(run.stdout).toContain('4 lines → 2 tasks (1 duplicates merged, 1 lines skipped)');
    expect(jsonl(join(out, 'tasks.jsonl')).map((line) => [line.question, line.reference, line.duplicates])).toEqual([
      ['Write a two-line poem that uses the word "salt".', 'Salt on the wind,\nsalt on my skin.', 1],
      ['Summarise the memo.', 'It says hi.', 0],
    ]);
    expect(json(join(out, 'report.json'))).toMatchObject({ lines: 4, tasks: 2, duplicates: 1, skipped: [{ line: 2 }] });
    expect((json(join(out, 'criteria.json')) as unknown as { name: string }[]).map((criterion) => criterion.name)).toEqual(['uses_required_word', 'line_count', 'meets_task_constraints']);
    expect(readFileSync(join(out, 'env.ts'), 'utf8')).toContain('JudgeRubric');

    const bad = join(dir, 'bad.jsonl');
    writeFileSync(bad, 'nope\n{"foo": 1}\n');
    const none = await tabrl(['tasks', 'from-traces', bad, '--out', join(dir, 'traces-bad')]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(`${bad}:1: skipped: not JSON`);
    expect(lastLine(none.stderr)).toContain('no line could be read as a conversation (2 lines, 2 skipped');
  });
});

describe('tabrl calibrate', () => {
  test('exact labels from a policy with known pass rates; env.ts over the learnable tasks runs', { timeout: 120_000 }, async () => {
    writeFileSync(join(dir, 'quarters.ts'), `
import { Rubric, SingleTurnEnv, type RewardContext } from 'tabrl';
/** 1 when the reply is "right". */
const rightReward = (ctx: RewardContext) => (ctx.completion.at(-1)?.content === 'right' ? 1 : 0);
export default function loadEnvironment() {
  return new SingleTurnEnv({ name: 'quarters', dataset: ['always', 'never', 'half', 'quarter'].map((question) => ({ question })), rubric: new Rubric({ funcs: [rightReward] }) });
}
`);
    seen.clear();
    const out = join(dir, 'calibration');
    const run = await tabrl(['calibrate', join(dir, 'quarters.ts'), '--base-url', server.baseURL, '--model', 'quarters', '-r', '4', '--keep', '0-1', '--out', out]);
    expect(run.stderr).toContain('wrote 16 rollouts');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('too-hard 1 · learnable 2 · too-easy 1');
    expect(jsonl(join(out, 'calibration.jsonl')).map((line) => [line.question, line.passRate, line.rewardMean, line.label, line.learnability])).toEqual([
      ['always', 1, 1, 'too-easy', 0],
      ['never', 0, 0, 'too-hard', 0],
      ['half', 0.5, 0.5, 'learnable', 1],
      ['quarter', 0.25, 0.25, 'learnable', 0.75],
    ]);
    expect(jsonl(join(out, 'kept-tasks.jsonl'))).toEqual([{ question: 'half' }, { question: 'quarter' }]);
    expect(json(join(out, 'report.json'))).toMatchObject({ status: 'completed', counts: { 'too-easy': 1, 'too-hard': 1, learnable: 2 } });

    const evalOut = join(dir, 'calibrated-eval');
    const evaluation = await tabrl(['eval', join(out, 'env.ts'), '--base-url', server.baseURL, '--model', 'quarters', '--out', evalOut]);
    expect(evaluation.code).toBe(0);
    expect(jsonl(join(evalOut, 'results.jsonl')).map((line) => (line.prompt as Message[]).at(-1)!.content)).toEqual(['half', 'quarter']);

    const badKeep = await tabrl(['calibrate', join(dir, 'quarters.ts'), '--model', 'quarters', '--base-url', server.baseURL, '--keep', '0.9-0.1', '--out', join(dir, 'cal-bad')]);
    expect(badKeep.code).toBe(2);
    expect(lastLine(badKeep.stderr)).toContain('--keep 0.9-0.1: the keep band must satisfy 0 ≤ lo < hi ≤ 1');
  });

  test('a built-in environment gets an env.ts that loads it by name over exactly the learnable tasks', { timeout: 120_000 }, async () => {
    seen.clear();
    const out = join(dir, 'calibration-builtin');
    const envArgs = { compact: true, numTasks: 4, numEvalTasks: 8, minLength: 4, maxLength: 8, seed: 3 };
    const run = await tabrl(['calibrate', 'reverse-text', '--env-args', JSON.stringify(envArgs), '--base-url', server.baseURL, '--model', 'reverses-even', '-r', '2', '-c', '1', '--out', out]);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(`and ${join(out, 'env.ts')} (the environment over the learnable tasks)`);
    const calibration = jsonl(join(out, 'calibration.jsonl'));
    expect(calibration).toHaveLength(8);
    for (const line of calibration) expect(line.label).toBe(charCodeSum(line.question as string) % 2 === 0 ? 'learnable' : 'too-hard');
    const learnable = calibration.filter((line) => line.label === 'learnable').map((line) => line.question);
    expect(learnable.length).toBeGreaterThan(0);
    expect(learnable.length).toBeLessThan(8);
    const source = readFileSync(join(out, 'env.ts'), 'utf8');
    expect(source).toContain("loadBuiltinEnvironment(\"reverse-text\", { ...ENV_ARGS, ...args })");
    expect(source).toContain('"compact": true');

    // tabrl eval type-checks the file, runs it isolated, and sees only the kept tasks.
    const evalOut = join(dir, 'calibrated-builtin-eval');
    const evaluation = await tabrl(['eval', join(out, 'env.ts'), '--base-url', server.baseURL, '--model', 'knows-1957', '--out', evalOut]);
    expect(evaluation.stderr).toContain(`wrote ${learnable.length} rollouts`);
    expect(evaluation.code).toBe(0);
    expect(jsonl(join(evalOut, 'results.jsonl')).map((line) => (line.prompt as Message[]).at(-1)!.content)).toEqual(learnable);
  });

  test('Ctrl-C stops it with exit code 130, says so, keeps the finished rollouts and calibrates them, and writes no env.ts', { timeout: 120_000 }, async () => {
    const out = join(dir, 'calibration-interrupted');
    const args = ['calibrate', 'reverse-text', '--env-args', '{"compact": true, "numTasks": 4, "numEvalTasks": 8, "minLength": 4, "maxLength": 8}', '--base-url', server.baseURL, '--model', 'slow-reverser', '-r', '2', '-c', '1', '--out', out];
    const run = await tabrlInterrupted(args, join(out, 'results.jsonl'), 3);
    expect(run.code).toBe(130);
    expect(run.stderr).toContain(`interrupted: ${join(out, 'results.jsonl')} holds every rollout that finished`);
    const results = jsonl(join(out, 'results.jsonl'));
    expect(results.length).toBeGreaterThanOrEqual(3);
    expect(results.length).toBeLessThan(16);
    for (const line of results) expect(line.reward).toBe(1);
    expect(run.stderr).toContain(`wrote ${results.length} rollouts`);
    expect(run.stderr).toContain('the run did not finish, so there is no env.ts');
    expect(existsSync(join(out, 'env.ts'))).toBe(false);
    expect(json(join(out, 'report.json'))).toMatchObject({ status: 'interrupted' });
    for (const line of jsonl(join(out, 'calibration.jsonl'))) expect(line.passRate === 1 || line.rollouts === 0).toBe(true);
  });
});

describe('tabrl audit', () => {
  async function gullibleResults(): Promise<string> {
    const lesson = await loadGullibleJudge({ numEvalTasks: 4 });
    const hack = new ScriptedClient(['Golden dreams whisper softly, gentle silver gleams glow in golden dreams and soft gentle whispers forever and ever in the golden night']);
    const hacked = await evaluate(lesson, hack, { numTasks: 4 });
    const honest = await evaluate(lesson, new ScriptedClient(judgedWritingExpertPolicy), { numTasks: 4 });
    const file = join(dir, 'gullible-results.jsonl');
    writeFileSync(file, `${recordsToJsonl(hacked.records)}this line is broken\n${recordsToJsonl(honest.records.map((record) => ({ ...record, rolloutIndex: 1 })))}`);
    return file;
  }

  test("flags the gullible judge's hacked rollouts, proposes criteria; an unreachable judge keeps the detectors' findings", { timeout: 120_000 }, async () => {
    const file = await gullibleResults();
    const out = join(dir, 'audit');
    const run = await tabrl(['audit', file, '--judge-base-url', server.baseURL, '--judge-model', 'judge', '--top', '4', '--random', '4', '--out', out]);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(`${file}:5: skipped: not JSON`);
    expect(run.stdout).toContain('Audit of 8 rollouts: 4 flagged.');
    const result = json(join(out, 'audit.json')) as unknown as { status: string; flagged: { id: string }[]; reviews: unknown[] };
    expect(result.status).toBe('completed');
    expect(result.flagged.map((entry) => entry.id).sort()).toEqual(['0:0', '1:0', '2:0', '3:0']);
    expect(result.reviews).toHaveLength(8);
    expect(readFileSync(join(out, 'audit.md'), 'utf8')).toContain('NOT EARNED');
    expect(existsSync(join(out, 'criteria.json'))).toBe(true);

    const gone = await startFakeOpenAIServer(() => 'unused');
    const url = gone.baseURL;
    await gone.close();
    const failed = join(dir, 'audit-unreachable');
    const unreachable = await tabrl(['audit', file, '--judge-base-url', url, '--judge-model', 'judge', '--timeout', '2', '--out', failed]);
    expect(unreachable.code).toBe(1);
    expect(lastLine(unreachable.stderr)).toMatch(/^tabrl audit: stopped: the judge failed while reviewing rollout .*: the judge is unreachable/);
    expect(json(join(failed, 'audit.json'))).toMatchObject({ status: 'failed', flagged: expect.arrayContaining([expect.objectContaining({ id: '0:0' })]) });
  });

  test('bad input: a folder without results', async () => {
    const run = await tabrl(['audit', dir, '--out', join(dir, 'audit-none')]);
    expect(run.code).toBe(2);
    expect(lastLine(run.stderr)).toContain('holds no results.jsonl');
  });
});

describe('tabrl eval with a failing judge', () => {
  test('a judge that answers 4xx stops the evaluation with a one-line reason, never a silent 0', { timeout: 60_000 }, async () => {
    writeFileSync(join(dir, 'judged.ts'), `
import { SingleTurnEnv, JudgeRubric, type ChatClient } from 'tabrl';
export default function loadEnvironment(args: { judgeClient?: ChatClient; judgeModel?: string } = {}) {
  if (!args.judgeClient) throw new Error('needs a judge');
  return new SingleTurnEnv({ name: 'judged', dataset: [{ question: 'a poem' }, { question: 'a song' }], rubric: new JudgeRubric({ judgeClient: args.judgeClient, judgeModel: args.judgeModel }) });
}
`);
    const out = join(dir, 'eval-judge-4xx');
    const run = await tabrl(['eval', join(dir, 'judged.ts'), '--base-url', server.baseURL, '--model', 'solver', '-n', '2', '-c', '1', '--judge-base-url', server.baseURL, '--judge-model', 'no-such-judge', '--out', out]);
    expect(run.code).toBe(1);
    expect(lastLine(run.stderr)).toMatch(/^tabrl eval: stopped: judgeReward threw: the judge refused the request/);
    expect(jsonl(join(out, 'results.jsonl'))).toHaveLength(1);
  });
});
