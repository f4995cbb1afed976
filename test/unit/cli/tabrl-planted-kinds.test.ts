// tabrl synth --backwards with the richer kinds: chains and writes planted in the shipped Parcelo
// traces, questions written by a (scripted) generator model from the planted end state — used when
// they name what the agent needs, refused otherwise — and verified by the offline solver.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../../support/fake-openai-server.ts';
import { runTabrl } from '../../support/tabrl-cli.ts';

const TRACES = fileURLToPath(new URL('../../../docs/examples/parcel-desk-traces.jsonl', import.meta.url));
const tabrl = (args: string[]) => runTabrl(args, { timeoutMs: 120_000 });

let server: FakeOpenAIServer;
beforeAll(async () => {
  // The generator writes a chain's question from its prompt (the field and the customer it must name);
  // for a write it forgets the date, so that question is refused and the template stays.
  server = await startFakeOpenAIServer((messages) => {
    const prompt = messages[0]!.content;
    const customer = /"customer":"([^"]+)"/.exec(prompt)![1]!;
    const field = /The answer is the value of "([^"]+)"/.exec(prompt)?.[1];
    if (field) return `"What is the ${field} for the tracking_id listed for customer ${customer}? Reply with the value alone."`;
    return `Please move the delivery of the parcel of ${customer}.`;
  });
});
afterAll(() => server.close());

describe('tabrl synth --backwards --kinds chain,write', () => {
  test('plants chains and writes, keeps the generator questions that name what is needed, and verifies them offline', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tabrl-planted-kinds-'));
    const out = join(dir, 'planted');
    const run = await tabrl(['synth', '--backwards', TRACES, '--simulator-model', 'heuristic', '--solver-model', 'heuristic', '--generator-base-url', server.baseURL, '--generator-model', 'writer', '--kinds', 'chain,write', '--tasks', '4', '-k', '1', '--out', out]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('kinds: chain 2/2 kept, write 2/2 kept; questions by the generator: 2 of 4');
    expect(run.stderr).toMatch(/planted task 1: kept the template question \(the question does not name "2026-03-\d\d"\)/);
    const tasks = readFileSync(join(out, 'tasks.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { kind: string; question: string; questionSource: string; goal?: unknown; kept: boolean });
    expect(tasks.map((task) => [task.kind, task.questionSource, task.kept])).toEqual([['chain', 'generator', true], ['write', 'template', true], ['chain', 'generator', true], ['write', 'template', true]]);
    expect(tasks[1]!.question).toMatch(/^Reschedule delivery: for the tracking_id listed for customer \S+, set date to 2026-03-\d\d\. Reply "done" when it is done\.$/);
    expect(readFileSync(join(out, 'env.ts'), 'utf8')).toContain('{ fn: reachedStateReward, weight: 1 }');

    const bad = await tabrl(['synth', '--backwards', TRACES, '--simulator-model', 'heuristic', '--solver-model', 'heuristic', '--kinds', 'chain,guess', '--out', join(dir, 'bad')]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--kinds chain,guess: give one or more of field, chain, write, comma-separated');
  });
});
