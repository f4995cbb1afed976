// Tool-using traces end to end: the real `tabrl` binary turns the shipped trace log of a fictional
// API into a tool environment, and `tabrl eval` runs it against a fake server that validates every
// request like the OpenAI API (HTTP 400 on a broken tool turn) and plays policy and judge.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ChatRequest, Message } from '../../../src/envs/index.ts';
import { startFakeOpenAIServer, type FakeOpenAIServer, type FakeReply } from '../../support/fake-openai-server.ts';
import { strictRequestProblem, toolCallBody } from '../../support/strict-openai-validation.ts';
import { runTabrl } from '../../support/tabrl-cli.ts';

const TRACES = fileURLToPath(new URL('../../../docs/examples/parcel-desk-traces.jsonl', import.meta.url));
const tabrl = (args: string[]) => runTabrl(args, { timeoutMs: 120_000 });
const jsonl = (path: string) => readFileSync(path, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);

/** A policy that looks the parcel or the customer up once, then answers with what the tool said. */
function toolPolicy(messages: Message[], request: ChatRequest, index: number): FakeReply {
  const last = messages.at(-1)!;
  const field = /What is the (\S+) for/.exec(messages.find((message) => message.role === 'user')!.content)?.[1];
  if (last.role === 'tool') return field ? `Answer: ${(JSON.parse(last.content) as Record<string, string>)[field]}` : `According to Parcelo: ${last.content}`;
  const id = /PX-\d{4}/.exec(last.content)?.[0];
  if (id) return { status: 200, body: toolCallBody(request.model, `call_${index}`, 'track_parcel', { tracking_id: id }) };
  const customer = /I am ([a-z.]+)\./.exec(last.content)?.[1];
  if (customer) return { status: 200, body: toolCallBody(request.model, `call_${index}`, 'find_parcels', { customer }) };
  return 'Our desk is open 8:00 to 18:00.';
}

let server: FakeOpenAIServer;
const refused: string[] = [];
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tabrl-tool-traces-'));
  server = await startFakeOpenAIServer((messages, request, index) => {
    const problem = strictRequestProblem(request);
    if (problem) {
      refused.push(problem);
      return { status: 400, body: { error: { message: problem, type: 'invalid_request_error' } } };
    }
    if (request.model === 'judge') return 'Score: 8';
    if (request.model === 'chatty-simulator') return 'Sure! Here is what the tool would say: all good.';
    return toolPolicy(messages, request, index);
  });
});
afterAll(() => server.close());

describe('tabrl tasks from-traces with tool calls', () => {
  test('keeps the calls, reports the tools, and writes a tool environment whose rollouts a strict server accepts', { timeout: 180_000 }, async () => {
    const out = join(dir, 'tasks');
    const run = await tabrl(['tasks', 'from-traces', TRACES, '--out', out]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('52 lines → 34 tasks (17 duplicates merged, 1 lines skipped)');
    expect(run.stdout).toContain('tools: track_parcel, find_parcels, reschedule_delivery (49 recorded calls');
    expect(run.stderr).toContain(':52: skipped: message 2 is a tool message whose tool_call_id "call_lost" answers no call');
    const tasks = jsonl(join(out, 'tasks.jsonl'));
    expect(tasks.filter((task) => task.reference === null).map((task) => task.question)).toEqual(['Status of PX-1002, please.']);
    expect(tasks.every((task) => typeof task.reference !== 'string' || !String(task.reference).includes('tool_calls'))).toBe(true);
    expect(readFileSync(join(out, 'env.ts'), 'utf8')).toContain('new SimulatedToolEnv(');

    const evalOut = join(dir, 'eval');
    const evaluation = await tabrl(['eval', join(out, 'env.ts'), '--base-url', server.baseURL, '--model', 'agent', '--judge-base-url', server.baseURL, '--judge-model', 'judge', '-n', '6', '-r', '1', '--out', evalOut]);
    expect(evaluation.stderr).not.toContain('400');
    expect(evaluation.code).toBe(0);
    expect(refused).toEqual([]);
    const results = jsonl(join(evalOut, 'results.jsonl')) as { errors: unknown[]; scores: Record<string, number>; completion: Message[] }[];
    expect(results).toHaveLength(6);
    expect(results.flatMap((result) => result.errors)).toEqual([]);
    expect(results.every((result) => result.scores.usedToolsMetric === 1)).toBe(true);
    // The simulated tool answered the first task's call with the recorded result of the same call.
    expect(results[0]!.completion[1]).toMatchObject({ role: 'tool', content: '{"tracking_id":"PX-1005","status":"in transit","location":"Turin hub","eta":"2026-03-14"}' });
  });
});

describe('tabrl simulate', () => {
  test('fidelity per tool on the held-out calls, per round; env.ts runs offline; a reused --out and bad input lose nothing', { timeout: 240_000 }, async () => {
    const help = await tabrl(['simulate', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--simulator-base-url URL');
    expect(help.stdout).toContain('--rounds R');

    const out = join(dir, 'sim');
    const run = await tabrl(['simulate', TRACES, '--simulator-model', 'heuristic', '--rounds', '2', '--out', out]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('round 2 (3 corrections in the prompt)');
    const fidelity = JSON.parse(readFileSync(join(out, 'fidelity.json'), 'utf8')) as { status: string; records: number; pool: number; heldOut: number; rounds: { rows: { tool: string; calls: number; exact: number; fields: number; judged: null }[]; overall: { exact: number } }[] };
    expect(fidelity).toMatchObject({ status: 'completed', records: 49, pool: 36, heldOut: 13 });
    expect(fidelity.rounds).toHaveLength(2);
    // Retrieval answers a held-out call exactly when the same call was recorded elsewhere in the log.
    expect(fidelity.rounds[0]!.rows.map((row) => [row.tool, row.calls, row.exact])).toEqual([['track_parcel', 8, 1], ['reschedule_delivery', 2, 0], ['find_parcels', 3, 2 / 3]]);
    expect(fidelity.rounds[0]!.overall.exact).toBe(10 / 13);
    expect(jsonl(join(out, 'records.jsonl')).filter((record) => record.heldOut === true)).toHaveLength(13);

    const evalOut = join(dir, 'sim-eval');
    const evaluation = await tabrl(['eval', join(out, 'env.ts'), '--base-url', server.baseURL, '--model', 'agent', '--judge-base-url', server.baseURL, '--judge-model', 'judge', '-n', '3', '-r', '2', '--out', evalOut]);
    expect(evaluation.code).toBe(0);
    expect(jsonl(join(evalOut, 'results.jsonl')).flatMap((record) => record.errors as unknown[])).toEqual([]);

    const before = readFileSync(join(out, 'fidelity.json'), 'utf8');
    const reused = await tabrl(['simulate', TRACES, '--simulator-model', 'heuristic', '--out', out]);
    expect(reused.code).toBe(2);
    expect(reused.stderr).toContain('already holds fidelity.json');
    expect(readFileSync(join(out, 'fidelity.json'), 'utf8')).toBe(before);

    const chatty = await tabrl(['simulate', TRACES, '--simulator-base-url', server.baseURL, '--simulator-model', 'chatty-simulator', '--out', join(dir, 'chatty')]);
    expect(chatty.code).toBe(0);
    expect(chatty.stdout).toContain('all tools                 13    0%    0%     —  (13 garbage)');

    const closed = await startFakeOpenAIServer(() => 'unused');
    await closed.close();
    const down = await tabrl(['simulate', TRACES, '--simulator-base-url', closed.baseURL, '--simulator-model', 'sim', '--timeout', '5', '--out', join(dir, 'down')]);
    expect(down.code).toBe(1);
    expect(down.stderr).toContain('the simulator model failed on');
    expect(JSON.parse(readFileSync(join(dir, 'down', 'fidelity.json'), 'utf8'))).toMatchObject({ status: 'failed' });
    expect(existsSync(join(dir, 'down', 'env.ts'))).toBe(false);

    const noTools = join(dir, 'no-tools.jsonl');
    writeFileSync(noTools, `${JSON.stringify({ messages: [{ role: 'user', content: 'Hi' }, { role: 'assistant', content: 'Hello' }] })}\nnot json\n`);
    const none = await tabrl(['simulate', noTools, '--simulator-model', 'heuristic', '--out', join(dir, 'none')]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain(':2: skipped: not JSON');
    expect(none.stderr).toContain('no tool call with a result was found (2 lines, 1 skipped)');

    const single = join(dir, 'single.jsonl');
    writeFileSync(single, readFileSync(TRACES, 'utf8').split('\n')[0]!);
    const once = await tabrl(['simulate', single, '--simulator-model', 'heuristic', '--out', join(dir, 'single')]);
    expect(once.code).toBe(0);
    expect(once.stderr).toContain('no recorded call could be held out');
    expect(JSON.parse(readFileSync(join(dir, 'single', 'fidelity.json'), 'utf8'))).toMatchObject({ status: 'completed', heldOut: 0, rounds: [] });
  });
});

describe('tabrl synth --backwards', () => {
  test('plants tasks in the simulated backend; env.ts rewards the planted answer; bad sources are refused', { timeout: 240_000 }, async () => {
    const help = await tabrl(['synth', '--backwards', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--max-closed-book RATE');

    const sim = join(dir, 'sim-for-planting');
    expect((await tabrl(['simulate', TRACES, '--simulator-model', 'heuristic', '--out', sim])).code).toBe(0);
    const out = join(dir, 'planted');
    const run = await tabrl(['synth', '--backwards', sim, '--simulator-model', 'heuristic', '--solver-model', 'heuristic', '--kinds', 'field', '--tasks', '5', '-k', '2', '--out', out]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('planted 5 tasks: kept 5, answerable without tools 0, unsolved with tools 0');
    expect(run.stdout).toContain('pass rate of kept tasks: with tools 1.000, without tools 0.000');
    const tasks = jsonl(join(out, 'tasks.jsonl')) as { question: string; answer: string; toolPassRate: number; closedBookPassRate: number }[];
    expect(tasks).toHaveLength(5);

    const evalOut = join(dir, 'planted-eval');
    const evaluation = await tabrl(['eval', join(out, 'env.ts'), '--base-url', server.baseURL, '--model', 'agent', '-r', '2', '--out', evalOut]);
    expect(evaluation.code).toBe(0);
    const results = jsonl(join(evalOut, 'results.jsonl')) as { scores: Record<string, number>; errors: unknown[] }[];
    expect(results.map((result) => [result.scores.exactMatchReward, result.scores.usedToolsMetric])).toEqual(results.map(() => [1, 1]));
    const calibration = await tabrl(['calibrate', join(out, 'env.ts'), '--base-url', server.baseURL, '--model', 'agent', '-r', '2', '--out', join(dir, 'planted-calibration')]);
    expect(calibration.code).toBe(0);
    expect(calibration.stdout).toContain('too-hard 0 · learnable 0 · too-easy 5');
    const audit = await tabrl(['audit', evalOut, '--out', join(dir, 'planted-audit')]);
    expect(audit.code).toBe(0);

    const notSim = await tabrl(['synth', '--backwards', dir, '--simulator-model', 'heuristic', '--solver-model', 'heuristic', '--out', join(dir, 'x')]);
    expect(notSim.code).toBe(2);
    expect(notSim.stderr).toContain('is not a tabrl simulate folder: it has no tools.json');
  });
});
