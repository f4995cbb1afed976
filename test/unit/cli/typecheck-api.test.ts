// The `tabrl` API an environment file is type-checked against (the CLI's check; the playground's
// editor declarations are emitted from the same src/envs/index.ts) knows the group rewards,
// RubricGroup and stop conditions, and catches their misuse.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { typecheckEnvironmentFile } from '../../../src/cli/typecheck-env.ts';

const FILE = (groupReturn: string, stopName: string) => `
import { MultiTurnEnv, Rubric, RubricGroup, type GroupRewardFunction, type RewardContext, type StopCondition } from 'tabrl';

const diversityReward: GroupRewardFunction = (group: RewardContext[]) => ${groupReturn};
const solved: StopCondition = { ${stopName}: 'solved', check: (_messages, state) => state.turn > 2 };

export default function loadEnvironment() {
  const rubric = new RubricGroup([new Rubric({ name: 'main', funcs: [() => 1] }), new Rubric({ groupRewards: [{ fn: diversityReward, weight: 0.1 }] })]);
  return new MultiTurnEnv({ name: 'typed', dataset: [{ question: 'q' }], rubric, maxTurns: 4, stopConditions: [solved] }).addStopCondition('gaveUp', (messages) => messages.length > 9);
}
`;

test('a file using group rewards, RubricGroup and stop conditions type-checks; misuse is caught', { timeout: 60_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'tabrl-typed-'));
  writeFileSync(join(dir, 'good.ts'), FILE('group.map(() => 1)', 'name'));
  expect(typecheckEnvironmentFile(join(dir, 'good.ts'))).toEqual([]);
  writeFileSync(join(dir, 'bad.ts'), FILE('1', 'label'));
  const errors = typecheckEnvironmentFile(join(dir, 'bad.ts')).join('\n');
  expect(errors).toMatch(/bad\.ts:4:[^\n]*GroupRewardFunction[\s\S]*not assignable to type 'number\[\] \| Promise<number\[\]>'/);
  expect(errors).toMatch(/bad\.ts:5:.*'label' does not exist in type 'StopCondition/);
});
