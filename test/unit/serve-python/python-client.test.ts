/**
 * The Python package against the real `tabrl serve` (bin/tabrl.mjs), as a trainer in Python uses it:
 * python3 with nothing installed plays whole episodes of reverse-text, wordle and an environment file
 * with a tool, asking a local OpenAI-compatible fake for each reply; `tabrl eval` runs the same tasks
 * against the same fake, and every reward the Python client read must equal the one eval scored.
 * Then the error cases from Python: a step before reset, the session cap, a dropped client, the token.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BUILTIN_ENVIRONMENTS } from '../../../src/envs/builtin/index.ts';
import type { Message, ScriptedPolicy } from '../../../src/envs/index.ts';
import { loadEnvironmentSpec } from '../../../src/cli/load-environment.ts';
import { completionBody, startFakeOpenAIServer, type FakePolicy } from '../../support/fake-openai-server.ts';
import { readResults, runTabrl, writeEnvFile } from '../../support/tabrl-cli.ts';
import { startServeProcess, type ServeProcess } from '../../support/serve-wire.ts';

const PYTHON_DIR = fileURLToPath(new URL('../../../python', import.meta.url));
// The environment file here is the test's own and type-checks; skipping the check (for built-ins it
// is a no-op) keeps each test well inside its limit on a loaded machine.
const NO_TYPECHECK = ['--no-typecheck'];

/** Starts `tabrl serve SPEC --port 0 ...flags` and resolves once it printed its listening line. */
function startServe(spec: string, flags: string[] = [], env: Record<string, string> = {}): Promise<ServeProcess> {
  return startServeProcess([spec, '--port', '0', ...flags], { env });
}

/** Runs python/tests/drive_serve.py with python3 (no PYTHON* variables, no user site-packages). */
function drive(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('python3', ['-E', '-s', 'tests/drive_serve.py', ...args], { cwd: PYTHON_DIR, env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' }, timeout: 120_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

/** One episode as the Python client reported it. */
interface PlayedEpisode {
  task_index: number;
  reward: number | null;
  done: boolean;
  terminated: boolean;
  truncated: boolean;
  scores: Record<string, number> | null;
  metrics: Record<string, number> | null;
  turns: number;
  observed_task: number;
}

/** Plays tasks 0..tasks-1 of the eval split from Python and returns the episodes in task order. */
async function playFromPython(serveUrl: string, policyUrl: string, tasks: number, mode: 'sync' | 'async'): Promise<PlayedEpisode[]> {
  const { code, stdout, stderr } = await drive(['play', serveUrl, policyUrl, '--tasks', String(tasks), ...(mode === 'async' ? ['--async'] : [])]);
  expect(stderr).toBe('');
  expect(code).toBe(0);
  const episodes = stdout.trim().split('\n').map((line) => JSON.parse(line) as PlayedEpisode);
  return episodes.sort((a, b) => a.task_index - b.task_index);
}

/** Evaluates the same tasks with `tabrl eval` against the same policy endpoint; returns each task's reward and scores. */
async function evaluateWithCli(spec: string, policyUrl: string, tasks: number): Promise<{ task_index: number; reward: number; scores: Record<string, number>; turns: number }[]> {
  const out = join(mkdtempSync(join(tmpdir(), 'tabrl-py-eval-')), 'out');
  const run = await runTabrl(['eval', spec, '--base-url', policyUrl, '--model', 'fake', '-n', String(tasks), '-r', '1', '--out', out, ...NO_TYPECHECK], { timeoutMs: 120_000 });
  expect(run.stderr).toContain(`wrote ${tasks} rollouts`);
  expect(run.code).toBe(0);
  return readResults(out).sort((a, b) => a.task_index - b.task_index);
}

/** Plays from Python, evaluates with the CLI, and checks the two agree task by task; returns the Python episodes. */
async function expectSameRewards(spec: string, policy: FakePolicy, tasks: number, mode: 'sync' | 'async'): Promise<PlayedEpisode[]> {
  const fake = await startFakeOpenAIServer(policy);
  const serve = await startServe(spec, ['--split', 'eval', ...NO_TYPECHECK]);
  try {
    const played = await playFromPython(serve.url, fake.baseURL, tasks, mode);
    const scored = await evaluateWithCli(spec, fake.baseURL, tasks);
    expect(played.map((episode) => episode.task_index)).toEqual([...Array(tasks).keys()]);
    for (const [i, episode] of played.entries()) {
      const record = scored[i]!;
      expect(record.task_index).toBe(i);
      expect(episode).toMatchObject({ done: true, observed_task: i });
      // Exactly equal: the server sends the rubric's total as the float eval writes.
      expect(episode.reward, `task ${i}`).toBe(record.reward);
      expect({ ...episode.scores, ...episode.metrics }).toEqual(record.scores);
      expect(episode.turns).toBe(record.turns);
    }
    return played;
  } finally {
    await serve.stop();
    await fake.close();
  }
}

/** A reply text that a fake endpoint sends as a completion (for ScriptedPolicy results). */
const asText = async (reply: ReturnType<ScriptedPolicy>): Promise<string> => String(await reply);

describe('the Python client plays whole episodes and reads the rewards tabrl eval scores', () => {
  test('reverse-text (single turn), one blocking session after another', async () => {
    const env = await loadEnvironmentSpec('reverse-text');
    const expert = await BUILTIN_ENVIRONMENTS['reverse-text'].expert(env);
    // The expert's reversal, spoiled for prompts of odd length, so the rewards differ from task to task.
    const policy: FakePolicy = async (messages, request) => {
      const reply = await asText(expert(messages, request));
      return messages.at(-1)!.content.length % 2 === 1 ? reply.replace('<reversed>', '<reversed>xy') : reply;
    };
    const played = await expectSameRewards('reverse-text', policy, 6, 'sync');
    expect(new Set(played.map((episode) => episode.reward)).size).toBeGreaterThan(1);
    expect(played.every((episode) => episode.turns === 1 && episode.terminated && !episode.truncated)).toBe(true);
  });

  test('wordle (multi-turn), all sessions at once through the asyncio client', async () => {
    const env = await loadEnvironmentSpec('wordle');
    const expert = await BUILTIN_ENVIRONMENTS.wordle.expert(env);
    // The expert for two guesses, then a word that is not in the list: some games are won, some lost.
    const policy: FakePolicy = async (messages, request) => {
      const guesses = messages.filter((message: Message) => message.role === 'assistant').length;
      return guesses < 2 ? asText(expert(messages, request)) : '<guess>qqqqq</guess>';
    };
    const played = await expectSameRewards('wordle', policy, 4, 'async');
    expect(played.some((episode) => episode.turns > 1)).toBe(true);
    expect(new Set(played.map((episode) => episode.reward)).size).toBeGreaterThan(1);
  });

  test('an environment file with a tool: call_tool actions, then the final answer', async () => {
    const file = writeEnvFile(TOOL_ENV);
    const policy: FakePolicy = (messages, request, index) => {
      const last = messages.at(-1)!;
      if (last.role === 'tool') return last.content === '81' ? 'eighty-one' : last.content; // 9 × 9 is answered in words: a wrong answer
      const [a, b] = (/What is (\d+) times (\d+)/.exec(messages.findLast((message) => message.role === 'user')!.content) ?? []).slice(1).map(Number);
      const body = completionBody('', request.model, index) as { choices: { message: Record<string, unknown>; finish_reason: string }[] };
      body.choices[0]!.message = { role: 'assistant', content: '', tool_calls: [{ id: `call_${index}`, type: 'function', function: { name: 'multiply', arguments: JSON.stringify({ a, b }) } }] };
      body.choices[0]!.finish_reason = 'tool_calls';
      return { status: 200, body };
    };
    const played = await expectSameRewards(file, policy, 3, 'sync');
    expect(played.map((episode) => episode.reward)).toEqual([1.5, 1.5, 0.5]);
    expect(played.map((episode) => episode.turns)).toEqual([2, 2, 2]);
  });
});

describe('the TRL environment class against the real server', () => {
  test('tools generated from the served schemas, played as GRPOTrainer calls them, score what tabrl eval scores', async () => {
    const file = writeEnvFile(TOOL_ENV);
    const serve = await startServe(file, NO_TYPECHECK);
    try {
      const rows = join(mkdtempSync(join(tmpdir(), 'tabrl-py-rows-')), 'rows.jsonl');
      const written = await runTabrl(['tasks', 'rows', file, '--split', 'eval', '--out', rows, ...NO_TYPECHECK]);
      expect(written.code, written.stderr).toBe(0);
      const { code, stdout, stderr } = await drive(['trl', serve.url, '--rows', rows]);
      expect(stderr).toBe('');
      expect(code).toBe(0);
      const report = JSON.parse(stdout);
      expect(report.tools).toEqual(['answer', 'multiply']);
      expect(report.async).toBe(true);
      expect(report.multiply_parameters).toEqual({ a: 'float', b: 'float' });
      expect(report.multiply_doc).toBe("Multiplies two numbers.\n\nArgs:\n    a: the first factor\n    b: the second factor\n\nReturns:\n    The environment's reply.");
      expect(report.raw_row_reset).toBeNull();
      expect(report.episodes.map((episode: { task_index: number }) => episode.task_index)).toEqual([0, 1, 2]);
      expect(report.episodes.map((episode: { prompt: string }) => episode.prompt)).toEqual(['What is 6 times 7? Use the multiply tool, then answer with the number only.', 'What is 12 times 3? Use the multiply tool, then answer with the number only.', 'What is 9 times 9? Use the multiply tool, then answer with the number only.']);
      expect(report.episodes.map((episode: { tool_result: string }) => episode.tool_result)).toEqual(['42', '36', '81']);
      // The same replies as the fake model of the tool test above, so the same rewards tabrl eval scored there.
      expect(report.episodes.map((episode: { reward: number }) => episode.reward)).toEqual([1.5, 1.5, 0.5]);
    } finally {
      await serve.stop();
    }
  });
});

// Multiplication with a tool; correct answers score 1, using the tool 0.5 more; the turn count is a metric.
const TOOL_ENV = `
import { ToolEnv, Rubric, defineTool, type ToolState } from 'tabrl';

const multiply = defineTool<{ a: number; b: number }>({
  name: 'multiply',
  description: 'Multiplies two numbers.',
  parameters: { type: 'object', properties: { a: { type: 'number', description: 'the first factor' }, b: { type: 'number', description: 'the second factor' } }, required: ['a', 'b'] },
  run: ({ a, b }) => String(a * b),
});

const tasks = [[6, 7], [12, 3], [9, 9]].map(([a, b]) => ({ question: \`What is \${a} times \${b}? Use the multiply tool, then answer with the number only.\`, answer: String(a * b) }));

export default function loadEnvironment() {
  return new ToolEnv({
    name: 'multiplier',
    dataset: tasks,
    evalDataset: tasks,
    tools: [multiply],
    maxTurns: 4,
    rubric: new Rubric<ToolState>({ rewards: [
      { name: 'correct', fn: ({ completion, answer }) => (completion.at(-1)?.content.trim() === answer ? 1 : 0) },
      { name: 'usedTool', weight: 0.5, fn: ({ state }) => (state.toolCalls > 0 ? 1 : 0) },
      { name: 'turns', metric: 'info', fn: ({ state }) => state.turn },
    ] }),
  });
}
`;

describe('error cases from Python', () => {
  let serve: ServeProcess;
  beforeAll(async () => {
    serve = await startServe('reverse-text', ['--max-sessions', '2']);
  });
  afterAll(() => serve.stop());

  test('a step before reset, the session cap, a client that drops mid-episode, large and oversized frames', async () => {
    const { code, stdout, stderr } = await drive(['errors', serve.url, '--max-sessions', '2']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const report = JSON.parse(stdout);
    expect(report.health).toEqual({ status: 'healthy' });
    expect(report.action_required).toEqual(['message']);
    expect(report.metadata_keys).toEqual(expect.arrayContaining(['name', 'description', 'version']));
    expect(report.step_before_reset).toMatchObject({ code: 'SESSION_ERROR' });
    expect(report.state_after_error).toMatchObject({ step_count: 0 });
    expect(report.over_the_cap).toMatchObject({ code: 'CAPACITY_REACHED', active_sessions: 2, max_sessions: 2 });
    expect(report.after_capacity_error).toMatchObject({ code: 'CONNECTION_CLOSED' });
    expect(report.replacement_after_drop).toBe(true);
    expect(report.replacement_episode).toEqual({ done: true, reward_is_number: true });
    expect(report.large_step).toEqual({ done: true, echoed_length: 3_000_000 + '<reversed></reversed>'.length });
    // The server closes a session whose frame is over its limit with 1009 (message too big).
    expect(report.oversized_step).toMatchObject({ code: 'CONNECTION_CLOSED', close_code: 1009 });
  });
});

describe('the bearer token from Python', () => {
  let serve: ServeProcess;
  beforeAll(async () => {
    serve = await startServe('reverse-text', ['--token-env', 'P26_SERVE_TOKEN'], { P26_SERVE_TOKEN: 'tok-123' });
  });
  afterAll(() => serve.stop());

  test('a session is refused without the token or with a wrong one, and opens with it', async () => {
    const { code, stdout, stderr } = await drive(['token', serve.url, 'tok-123']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const report = JSON.parse(stdout);
    expect(report.without_token).toMatchObject({ code: 'CONNECT_FAILED' });
    expect(report.without_token.message).toContain('401');
    expect(report.wrong_token).toMatchObject({ code: 'CONNECT_FAILED' });
    expect(report.with_token_task).toBe(0);
  });
});
