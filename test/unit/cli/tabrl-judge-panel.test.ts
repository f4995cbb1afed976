// `tabrl eval --judges FILE`: a panel of judge endpoints lent to an environment file as one judge; the real binary against the fake server.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ChatRequest, Message } from '../../../src/envs/index.ts';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../../support/fake-openai-server.ts';
import { runTabrl } from '../../support/tabrl-cli.ts';

const tabrl = (args: string[]) => runTabrl(args, { timeoutMs: 90_000 });
const lastLine = (text: string) => text.trim().split('\n').at(-1)!;
// Votes of judges a, b and c on tasks 0–3: all yes, 2 of 3, all no, 1 of 3.
const VOTES: Record<string, boolean[]> = { 'judge-a': [true, true, false, true], 'judge-b': [true, true, false, false], 'judge-c': [true, false, false, false] };

let server: FakeOpenAIServer;
let dir: string;
beforeAll(async () => {
  server = await startFakeOpenAIServer((messages: Message[], request: ChatRequest) => {
    const text = messages.at(-1)!.content;
    const votes = VOTES[request.model];
    if (votes) return `The response reads fine.\nVerdict: ${votes[Number(/Question:\ntask (\d)/.exec(text)![1])] ? 'yes' : 'no'}`;
    return `my reply to ${text}`;
  });
  dir = mkdtempSync(join(tmpdir(), 'tabrl-panel-'));
  writeFileSync(join(dir, 'judged.ts'), `
import { SingleTurnEnv, JudgeRubric, type ChatClient } from 'tabrl';
export default function loadEnvironment(args: { judgeClient?: ChatClient; judgeModel?: string } = {}) {
  if (!args.judgeClient) throw new Error('needs a judge');
  return new SingleTurnEnv({ name: 'judged', dataset: [0, 1, 2, 3].map((i) => ({ question: 'task ' + i })), rubric: new JudgeRubric({ judgeClient: args.judgeClient, judgeModel: args.judgeModel }) });
}
`);
});
afterAll(async () => {
  await server.close();
});

const panelFile = (judges: { baseUrl: string; model: string; name?: string }[], aggregation = 'majority') => {
  const path = join(dir, `panel-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, JSON.stringify({ aggregation, judges }));
  return path;
};

describe('tabrl eval --judges', () => {
  test('a majority of three judges: rewards, agreement figures and split rollouts in the summary and metadata.json', { timeout: 90_000 }, async () => {
    const file = panelFile(['judge-a', 'judge-b', 'judge-c'].map((model) => ({ baseUrl: server.baseURL, model, name: model.slice(-1) })));
    const out = join(dir, 'eval-panel');
    const run = await tabrl(['eval', join(dir, 'judged.ts'), '--base-url', server.baseURL, '--model', 'policy', '-n', '4', '-c', '1', '--judges', file, '--out', out]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("judge panel: a, b, c (majority), 4 calls\n  agreement: pairwise 0.667, Fleiss' kappa 0.333 over 4 calls; split on 2\n  split rollouts: 1:0, 3:0");
    const metadata = JSON.parse(readFileSync(join(out, 'metadata.json'), 'utf8')) as Record<string, { mean: number } & Record<string, unknown>>;
    expect(metadata.judge_panel).toMatchObject({ aggregation: 'majority', judges: [{ name: 'a', model: 'judge-a' }, { name: 'b' }, { name: 'c' }], calls: 4, agreement: { over_calls: 4, split_calls: 2 }, split_rollouts: ['1:0', '3:0'] });
    const agreement = (metadata.judge_panel as unknown as { agreement: { pairwise: number; fleiss_kappa: number } }).agreement;
    expect(agreement.pairwise).toBeCloseTo(2 / 3, 12);
    expect(agreement.fleiss_kappa).toBeCloseTo(1 / 3, 12);
    expect((metadata.summary as unknown as { reward: { mean: number } }).reward.mean).toBe(0.5);
  });

  test('a dead judge stops the run naming it; a bad panel file is a usage error', { timeout: 90_000 }, async () => {
    const gone = await startFakeOpenAIServer(() => 'unused');
    const deadUrl = gone.baseURL;
    await gone.close();
    const file = panelFile([{ baseUrl: server.baseURL, model: 'judge-a', name: 'alive' }, { baseUrl: deadUrl, model: 'judge-b', name: 'dead' }]);
    const run = await tabrl(['eval', join(dir, 'judged.ts'), '--base-url', server.baseURL, '--model', 'policy', '-n', '2', '-c', '1', '--timeout', '2', '--max-retries', '0', '--judges', file, '--out', join(dir, 'eval-dead')]);
    expect(run.code).toBe(1);
    expect(lastLine(run.stderr)).toMatch(/^tabrl eval: stopped: judgeReward threw: the judge is unreachable .*judge dead: /);

    const one = panelFile([{ baseUrl: server.baseURL, model: 'judge-a' }]);
    const single = await tabrl(['eval', join(dir, 'judged.ts'), '--base-url', server.baseURL, '--model', 'policy', '--judges', one, '--out', join(dir, 'eval-one')]);
    expect(single.code).toBe(2);
    expect(lastLine(single.stderr)).toContain('"judges" must list two or more judges');
    const both = await tabrl(['eval', join(dir, 'judged.ts'), '--base-url', server.baseURL, '--model', 'policy', '--judges', file, '--judge-base-url', server.baseURL, '--judge-model', 'judge-a', '--out', join(dir, 'eval-both')]);
    expect(lastLine(both.stderr)).toContain('give one judge (--judge-base-url, --judge-model) or a panel (--judges FILE), not both');
    const help = await tabrl(['eval', '--help']);
    expect(help.stdout).toContain('--judges FILE');
  });
});
