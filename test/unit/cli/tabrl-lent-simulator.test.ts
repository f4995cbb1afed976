// The simulator as its own lent role: `tabrl eval` of a simulated-tool environment file with a
// simulator (--simulator-*) and a judge (--judge-*) side by side, each answering only its own calls
// through the environment's isolated process; a missing simulator is an error naming the flags;
// --simulator-model heuristic lends the offline scripted simulator; train, serve and calibrate take
// the flags; a file downloaded from the tab records its simulator, and tabrl says which flags lend it.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type ChatRequest, type Message } from '../../../src/envs/index.ts';
import { simulatedEnvironmentFile, withSimulatorHeader } from '../../../src/envs/studio/index.ts';
import { startFakeOpenAIServer, type FakeOpenAIServer, type FakeReply } from '../../support/fake-openai-server.ts';
import { toolCallBody } from '../../support/strict-openai-validation.ts';
import { runTabrl } from '../../support/tabrl-cli.ts';

const tabrl = (args: string[]) => runTabrl(args, { timeoutMs: 120_000 });
const jsonl = (path: string) => readFileSync(path, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);

const TOOLS = [{ type: 'function' as const, function: { name: 'track_parcel', description: "A parcel's status", parameters: { type: 'object', properties: { tracking_id: { type: 'string' } }, required: ['tracking_id'] } } }];
const RECORDS = [{ tool: 'track_parcel', arguments: { tracking_id: 'PX-1001' }, result: '{"tracking_id":"PX-1001","status":"delivered"}' }];
const task = (id: string) => ({ prompt: [{ role: 'user' as const, content: `What is the status of ${id}?` }], answer: 'held at depot' });
/** What the simulator endpoint answers: a status no record holds, so a result that carries it came from the simulator. */
const SIMULATED = (id: string) => `{"tracking_id":"${id}","status":"held at depot"}`;

/** A policy that tracks the parcel its question names, then answers with the status it read. */
function policy(messages: Message[], request: ChatRequest, index: number): FakeReply {
  const last = messages.at(-1)!;
  if (last.role === 'tool') return `Answer: ${(JSON.parse(last.content) as { status: string }).status}`;
  return { status: 200, body: toolCallBody(request.model, `call_${index}`, 'track_parcel', { tracking_id: /PX-\d{4}/.exec(last.content)![0] }) };
}

let server: FakeOpenAIServer;
let dir: string;
let envFile: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tabrl-lent-simulator-'));
  envFile = join(dir, 'env.ts');
  writeFileSync(envFile, simulatedEnvironmentFile({ name: 'lent-simulator', tasks: [task('PX-2001'), task('PX-2002')], tools: TOOLS, records: RECORDS, scoring: 'judge-grade', defaultSimulator: 'simulator' }));
  server = await startFakeOpenAIServer((messages, request, index) => {
    if (request.model === 'sim') return SIMULATED(/"tracking_id":"(PX-\d{4})"/.exec(messages.at(-1)!.content.split('The call to answer:')[1] ?? '')?.[1] ?? 'PX-0000');
    if (request.model === 'grader') return 'Score: 9';
    return policy(messages, request, index);
  });
});
afterAll(() => server.close());

describe('--simulator-* lends the simulator as its own role', () => {
  test('eval with a simulator and a judge: each gets its own calls; without a simulator the error names the flags', { timeout: 180_000 }, async () => {
    const out = join(dir, 'eval');
    const run = await tabrl(['eval', envFile, '--base-url', server.baseURL, '--model', 'agent', '--judge-base-url', server.baseURL, '--judge-model', 'grader', '--simulator-base-url', server.baseURL, '--simulator-model', 'sim', '-n', '2', '-r', '2', '--no-typecheck', '--out', out]);
    expect(run.code).toBe(0);
    const byModel = (model: string) => server.requests.filter((request) => request.model === model);
    // One simulator call per task (the group of 2 shares it), each a simulator prompt for that task's parcel.
    expect(byModel('sim').map((request) => /The call to answer:\n### Call track_parcel\n(.*)/.exec(request.messages[0]!.content)?.[1]).sort()).toEqual(['{"tracking_id":"PX-2001"}', '{"tracking_id":"PX-2002"}']);
    // The judge grades the 4 final answers and sees no simulator prompt.
    expect(byModel('grader')).toHaveLength(4);
    expect(byModel('grader').every((request) => !request.messages.some((message) => message.content.includes('You simulate the tool')))).toBe(true);
    const results = jsonl(join(out, 'results.jsonl')) as { completion: Message[]; scores: Record<string, number>; errors: unknown[] }[];
    expect(results.flatMap((result) => result.errors)).toEqual([]);
    expect(results.map((result) => result.completion[1]!.content).sort()).toEqual([SIMULATED('PX-2001'), SIMULATED('PX-2001'), SIMULATED('PX-2002'), SIMULATED('PX-2002')]);
    expect(results.map((result) => [result.scores.exactMatchMetric, result.scores.usedToolsMetric])).toEqual(results.map(() => [1, 1]));
    expect(JSON.parse(readFileSync(join(out, 'metadata.json'), 'utf8'))).toMatchObject({ simulator: { baseUrl: server.baseURL, model: 'sim' }, judge: { model: 'grader' } });

    const missing = await tabrl(['eval', envFile, '--base-url', server.baseURL, '--model', 'agent', '--judge-base-url', server.baseURL, '--judge-model', 'grader', '-n', '1', '--no-typecheck', '--out', join(dir, 'missing')]);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('the tools are simulated by a lent simulator model and none was given: add --simulator-base-url URL --simulator-model NAME');
  });

  test('--simulator-model heuristic lends the scripted simulator; train, serve and calibrate take the flags', { timeout: 180_000 }, async () => {
    const out = join(dir, 'heuristic');
    const run = await tabrl(['eval', envFile, '--base-url', server.baseURL, '--model', 'agent', '--judge-base-url', server.baseURL, '--judge-model', 'grader', '--simulator-model', 'heuristic', '-n', '2', '-r', '1', '--no-typecheck', '--out', out]);
    expect(run.code).toBe(0);
    const results = jsonl(join(out, 'results.jsonl')) as { completion: Message[] }[];
    // The scripted simulator answers an unrecorded id with the nearest record: the recorded parcel's result.
    expect(results.map((result) => result.completion[1]!.content)).toEqual([RECORDS[0]!.result, RECORDS[0]!.result]);
    expect(JSON.parse(readFileSync(join(out, 'metadata.json'), 'utf8'))).toMatchObject({ simulator: { model: 'heuristic' } });
    for (const command of ['train', 'serve', 'calibrate']) {
      const help = await tabrl([command, '--help']);
      expect(help.stdout).toContain('--simulator-base-url URL');
      expect(help.stdout).toContain('args.simulatorClient');
    }
    const badServe = await tabrl(['serve', envFile, '--simulator-model', 'sim', '--port', '0']);
    expect(badServe.code).toBe(2);
    expect(badServe.stderr).toContain('--simulator-model sim needs --simulator-base-url');
  });
});

describe('a file downloaded from the tab records its tool simulator', () => {
  test('without --simulator-* flags, eval and train say which flags lend the recorded simulator; with them, nothing is said', { timeout: 180_000 }, async () => {
    const downloaded = join(dir, 'downloaded.ts');
    writeFileSync(downloaded, withSimulatorHeader(readFileSync(envFile, 'utf8'), { label: `endpoint sim at ${server.baseURL}`, baseURL: server.baseURL, model: 'sim' }));
    const note = `was downloaded from the tab with the tool simulator endpoint sim at ${server.baseURL}; no --simulator-* flag was given, so the file's own default answers its tools. to lend the same, add --simulator-base-url ${server.baseURL} --simulator-model sim`;
    const bare = await tabrl(['eval', downloaded, '--base-url', server.baseURL, '--model', 'agent', '--judge-base-url', server.baseURL, '--judge-model', 'grader', '-n', '1', '--no-typecheck', '--out', join(dir, 'bare')]);
    expect(bare.stderr).toContain(note);
    // This file's tools need a lent simulator, so the run stops, after the note that says how to lend one.
    expect(bare.code).not.toBe(0);
    expect(bare.stderr).toContain('the tools are simulated by a lent simulator model and none was given');
    const trained = await tabrl(['train', downloaded, '--model', 'tiny', '--sft-steps', '0', '--steps', '1', '--out', join(dir, 'train-bare')]);
    expect(trained.stderr).toContain(note);

    // The flags the note names run the file with the recorded simulator, and no note is printed.
    const lent = await tabrl(['eval', downloaded, '--base-url', server.baseURL, '--model', 'agent', '--judge-base-url', server.baseURL, '--judge-model', 'grader', '--simulator-base-url', server.baseURL, '--simulator-model', 'sim', '-n', '1', '--no-typecheck', '--out', join(dir, 'lent')]);
    expect(lent.code).toBe(0);
    expect(lent.stderr).not.toContain('was downloaded from the tab');
    const results = jsonl(join(dir, 'lent', 'results.jsonl')) as { completion: Message[] }[];
    expect(results[0]!.completion[1]!.content).toBe(SIMULATED('PX-2001'));
  });
});
