// Turn reward functions of an environment file run in its own process under `tabrl eval`: each model
// turn's weighted score comes back with the rollout (turn_rewards in results.jsonl), so GRPO, which
// rolls out through the same isolated environment, gets per-turn credit from untrusted code too.
import { dirname, join } from 'node:path';
import { expect, test } from 'vitest';
import { withFakeOpenAIServer } from '../../support/fake-openai-server.ts';
import { readResults, runTabrl, writeEnvFile } from '../../support/tabrl-cli.ts';

const ENV = `
import { MultiTurnEnv, Rubric, type Message, type RewardContext, type State } from 'tabrl';

/** 1 for each reply that is "yes". */
function yesTurnReward(ctx: RewardContext): number[] {
  return ctx.completion.filter((message) => message.role === 'assistant').map((message) => (message.content === 'yes' ? 1 : 0));
}

class ThreeTurns extends MultiTurnEnv {
  envResponse(): Message[] {
    return [{ role: 'user', content: 'again' }];
  }
  isCompleted(_messages: Message[], state: State): boolean {
    return state.turn >= 3;
  }
}

export default function loadEnvironment() {
  const rubric = new Rubric({ funcs: [function oneReward() { return 1; }] }).addTurnReward(yesTurnReward, 0.5);
  return new ThreeTurns({ name: 'three-turns', dataset: [{ question: 'say yes' }], rubric, maxTurns: 5 });
}
`;

test('tabrl eval returns the turn rewards an environment file scores in its own process', { timeout: 120_000 }, async () => {
  const replies = ['yes', 'no', 'yes'];
  await withFakeOpenAIServer((_messages, _request, index) => replies[index % 3]!, async (server) => {
    const envFile = writeEnvFile(ENV);
    const out = join(dirname(envFile), 'out');
    const { code, stderr } = await runTabrl(['eval', envFile, '--base-url', server.baseURL, '--model', 'm', '-n', '1', '-r', '1', '--out', out]);
    expect(stderr).not.toContain('Error');
    expect(code).toBe(0);
    const [line] = readResults(out);
    expect(line.turns).toBe(3);
    expect(line.turn_rewards).toEqual([0.5, 0, 0.5]);
    expect(line.reward).toBe(1);
    expect(line.scores.yesTurnReward).toBeCloseTo(2 / 3);
  });
});
