// Tool-using traces end to end: the real `tabrl` binary turns the shipped trace log of a fictional
// API into a tool environment, and `tabrl eval` runs it against a fake server that validates every
// request like the OpenAI API (HTTP 400 on a broken tool turn) and plays policy and judge.
import { mkdtempSync, readFileSync } from 'node:fs';
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
  if (last.role === 'tool') return `According to Parcelo: ${last.content}`;
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
