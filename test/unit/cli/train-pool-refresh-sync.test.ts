// tabrl train's task-pool refresh measures the policy with the weights the step just trained, not the ones before its update: the refresh
// is wired to the hook after the trainer's weight sync (the old wiring, in onGrpoStep, measured a policy one update old).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { completionText, Rubric, SingleTurnEnv, type RewardContext } from '../../../src/envs/index.ts';
import { DEFAULT_POOL_RULES } from '../../../src/envs/studio/index.ts';
import { openModel } from '../../../src/cli/open-model.ts';
import { createPoolRefresher } from '../../../src/cli/train-pool-refresh.ts';
import { runTraining } from '../../../src/rl/training-run.ts';

/** A reward the untrained tiny model's sampled bytes pass about half the time, so groups differ and steps update. */
const evenFirstByte = (ctx: RewardContext) => ((completionText(ctx.completion).charCodeAt(0) || 1) % 2 === 0 ? 1 : 0);

test('each refresh measures the policy as synced after the step it follows (max-async 1)', { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tabrl-pool-sync-'));
  writeFileSync(join(dir, 'more.md'), 'The radio mast went up in 1948 on the eastern ridge.\n');
  const env = new SingleTurnEnv({ name: 'bytes', dataset: ['ab', 'cd', 'ef', 'gh'].map((question) => ({ question, answer: 'x' })), rubric: new Rubric({ funcs: [evenFirstByte] }) });
  const lines: Record<string, unknown>[] = [];
  const refresher = await createPoolRefresher(
    env,
    { docs: dir, generator: { model: 'heuristic' }, solver: { model: 'heuristic' }, keep: [0.2, 0.8], every: 1, k: 2, rules: DEFAULT_POOL_RULES },
    { record: (line) => lines.push(line), say: () => {} },
  );
  const model = await openModel('tiny', { backend: 'cpu', seed: 5 });
  // Weight updates made by the steps up to each step (a step whose groups are all flat skips its update).
  const updatesThrough: number[] = [];
  let updates = 0;
  await runTraining(env, model, null, { seed: 5, maxTokens: 3, evalTasks: 0, warmup: null, grpo: { steps: 4, tasksPerStep: 2, groupSize: 4, schedule: { lr: 1e-2 }, maxAsync: 1 } }, {
    onGrpoStep: (metrics) => {
      if (!metrics.skipped) updates += 1;
      updatesThrough[metrics.step] = updates;
    },
    ...refresher.hooks,
  });
  model.backend.dispose();
  const refreshes = lines.filter((line) => line.phase === 'pool-refresh');
  expect(refreshes.map((line) => line.step)).toEqual([0, 1, 2, 3]);
  // The CPU decoder's version counts weight syncs: one per update. Measured after the sync, the refresh sees every update so far.
  expect(refreshes.map((line) => line.policyVersion)).toEqual(updatesThrough);
  // Not a trivial match: steps did update (an update not yet synced would read one lower).
  expect(updates).toBeGreaterThan(1);
});
