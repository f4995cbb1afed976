// Group reward functions of an environment file run in its own process under `tabrl eval`: each
// task's rollouts are scored together there (the scores and pass verdicts come back), and a group
// function that hangs is stopped by the time limit and recorded on every rollout of its group.
import { dirname, join } from 'node:path';
import { expect, test } from 'vitest';
import { withFakeOpenAIServer } from '../../support/fake-openai-server.ts';
import { readResults, runTabrl, writeEnvFile } from '../../support/tabrl-cli.ts';

const ENV = `
import { SingleTurnEnv, Rubric, lastAssistantText, type RewardContext } from 'tabrl';

/** 1 for a reply no other rollout of the group gave. */
function distinctReward(group: RewardContext[]): number[] {
  const texts = group.map((ctx) => lastAssistantText(ctx.completion));
  return texts.map((text) => (texts.filter((other) => other === text).length === 1 ? 1 : 0));
}

function hangingReward(): Promise<number[]> {
  return new Promise(() => {});
}

export default function loadEnvironment(args: { hang?: boolean } = {}) {
  const rubric = new Rubric({ funcs: [function halfReward() { return 0.5; }], groupRewards: [{ fn: args.hang ? hangingReward : distinctReward, weight: 0.5, name: 'groupReward' }] });
  return new SingleTurnEnv({ name: 'distinct', dataset: [{ question: 'x' }, { question: 'y' }], rubric });
}
`;

test('tabrl eval runs an environment file’s group rewards in its process, and stops one that hangs', { timeout: 180_000 }, async () => {
  const replies = ['same', 'same', 'other'];
  await withFakeOpenAIServer((_messages, _request, index) => replies[index % 3]!, async (server) => {
    const envFile = writeEnvFile(ENV);
    const out = join(dirname(envFile), 'out');
    const { code, stderr } = await runTabrl(['eval', envFile, '--base-url', server.baseURL, '--model', 'm', '-n', '1', '-r', '3', '-c', '1', '--out', out]);
    expect(stderr).not.toContain('Error');
    expect(code).toBe(0);
    const byReply = Object.fromEntries(readResults(out).map((line) => [line.completion[0].content, line]));
    expect(byReply.other.scores).toEqual({ halfReward: 0.5, groupReward: 1 });
    expect(byReply.other.reward).toBe(1);
    expect(byReply.other.passed).toBe(true);
    expect(byReply.same.scores.groupReward).toBe(0);
    expect(byReply.same.passed).toBe(false);

    const hung = join(dirname(envFile), 'hung');
    const slow = await runTabrl(['eval', envFile, '--env-args', '{"hang": true}', '--base-url', server.baseURL, '--model', 'm', '-n', '1', '-r', '2', '--time-limit', '1', '--max-consecutive-timeouts', '0', '--out', hung]);
    expect(slow.code).toBe(0);
    const failed = readResults(hung);
    expect(failed).toHaveLength(2);
    for (const line of failed) {
      expect(line.passed).toBe(false);
      expect(line.errors.at(-1)).toMatchObject({ source: 'reward', name: 'groupReward' });
      expect(line.errors.at(-1).message).toMatch(/the group reward functions did not finish: environment code of "distinct" ran for more than 1 s/);
    }
  });
});
