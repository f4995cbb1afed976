// `tabrl train --judges FILE`: a panel of judge endpoints (the fake server) is the training reward's one judge, as in tabrl eval; its agreement over the run is written to judge-panel.json.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ChatRequest, Message } from '../../../src/envs/index.ts';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../../support/fake-openai-server.ts';
import { runTabrl } from '../../support/tabrl-cli.ts';

const tabrl = (args: string[]) => runTabrl(args, { timeoutMs: 150_000 });
const lastLine = (text: string) => text.trim().split('\n').at(-1)!;

let server: FakeOpenAIServer;
let dir: string;
beforeAll(async () => {
  // Judge a says yes to everything, judge b no: every call splits.
  server = await startFakeOpenAIServer((_messages: Message[], request: ChatRequest) => (request.model === 'judge-a' ? 'Fine.\nVerdict: yes' : 'Not fine.\nVerdict: no'));
  dir = mkdtempSync(join(tmpdir(), 'tabrl-train-panel-'));
  writeFileSync(join(dir, 'judged.ts'), `
import { SingleTurnEnv, JudgeRubric, type ChatClient } from 'tabrl';
export default function loadEnvironment(args: { judgeClient?: ChatClient; judgeModel?: string } = {}) {
  if (!args.judgeClient) throw new Error('needs a judge');
  return new SingleTurnEnv({ name: 'judged', dataset: [0, 1, 2, 3].map((i) => ({ question: 'say ' + i })), rubric: new JudgeRubric({ judgeClient: args.judgeClient, judgeModel: args.judgeModel }) });
}
`);
  writeFileSync(join(dir, 'panel.json'), JSON.stringify({ aggregation: 'mean', judges: [{ name: 'a', baseUrl: server.baseURL, model: 'judge-a' }, { name: 'b', baseUrl: server.baseURL, model: 'judge-b' }] }));
});
afterAll(async () => {
  await server.close();
});

const trainArgs = (out: string) => ['train', join(dir, 'judged.ts'), '--model', 'tiny', '--sft-steps', '0', '--steps', '1', '--tasks-per-step', '2', '--group', '2', '--max-tokens', '4', '--eval-tasks', '0', '--out', out];

describe('tabrl train --judges', () => {
  test('the panel scores every training rollout: the mean of a yes and a no is the reward, and the figures are in judge-panel.json', { timeout: 200_000 }, async () => {
    const out = join(dir, 'run');
    const run = await tabrl([...trainArgs(out), '--judges', join(dir, 'panel.json')]);
    expect(run.code, run.stderr).toBe(0);
    const steps = readFileSync(join(out, 'metrics.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.phase === 'grpo');
    expect(steps).toHaveLength(1);
    expect((steps[0]!.reward as { mean: number }).mean).toBe(0.5);
    const panel = JSON.parse(readFileSync(join(out, 'judge-panel.json'), 'utf8')) as Record<string, unknown>;
    // 1 step × 2 tasks × 2 rollouts = 4 calls, every one split: pairwise 0; yes share 1/2, chance 1/2, kappa (0 − 1/2) / (1/2) = −1.
    expect(panel).toMatchObject({ aggregation: 'mean', judges: [{ name: 'a', model: 'judge-a' }, { name: 'b', model: 'judge-b' }], calls: 4, calls_without_score: 0, agreement: { pairwise: 0, fleiss_kappa: -1, over_calls: 4, split_calls: 4 } });
    expect(run.stderr).toContain("judge panel: a, b (mean), 4 calls\n  agreement: pairwise 0.000, Fleiss' kappa -1.000 over 4 calls; split on 4");
  });

  test('a judge and a panel together, or a bad panel file, are usage errors', async () => {
    const both = await tabrl([...trainArgs(join(dir, 'both')), '--judges', join(dir, 'panel.json'), '--judge-base-url', server.baseURL, '--judge-model', 'judge-a']);
    expect(both.code).toBe(2);
    expect(lastLine(both.stderr)).toContain('give one judge (--judge-base-url, --judge-model) or a panel (--judges FILE), not both');
    writeFileSync(join(dir, 'lonely.json'), JSON.stringify({ judges: [{ baseUrl: server.baseURL, model: 'judge-a' }] }));
    const lonely = await tabrl([...trainArgs(join(dir, 'lonely')), '--judges', join(dir, 'lonely.json')]);
    expect(lonely.code).toBe(2);
    expect(lastLine(lonely.stderr)).toContain('"judges" must list two or more judges');
    expect((await tabrl(['train', '--help'])).stdout).toContain('--judges FILE');
  });
});
