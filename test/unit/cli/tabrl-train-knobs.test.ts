// `tabrl train`'s GRPO knobs: --help lists each with its default, bad values are one-line errors
// (exit 2), and given knobs reach the trainer (its step metrics and the saved settings show them).
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { runTabrl } from '../../support/tabrl-cli.ts';

const tabrl = (args: string[]) => runTabrl(args, { timeoutMs: 120_000 });

const KNOBS = ['--loss-type', '--scale-rewards', '--turn-credit', '--importance-sampling', '--clip-low', '--clip-high', '--temperature', '--mask-truncated', '--keep-equal-groups', '--dynamic-sampling', '--max-tasks-per-step', '--entropy-top-q', '--max-staleness', '--stale-rollouts', '--echo-weight', '--micro-batch', '--max-grad-norm', '--weight-decay', '--lr-warmup', '--lr-schedule', '--kl-beta', '--max-async'];

test('--help lists every GRPO knob with its default', async () => {
  const { code, stdout } = await tabrl(['train', '--help']);
  expect(code).toBe(0);
  for (const knob of KNOBS) {
    const line = stdout.split('\n').find((text) => text.trimStart().startsWith(`${knob} `));
    expect(line, knob).toBeDefined();
    // The default is on the knob's line or the next one.
    const at = stdout.indexOf(line!);
    expect(stdout.slice(at, at + 260), knob).toMatch(/default/);
  }
});

test('bad knob values are refused with the allowed ones', async () => {
  const base = ['train', 'reverse-text', '--model', 'tiny', '--sft-steps', '0'];
  const cases: Array<[string[], string]> = [
    [['--loss-type', 'ppo'], '--loss-type must be one of dapo, bnpo, grpo, dr_grpo, got "ppo"'],
    [['--scale-rewards', 'std'], '--scale-rewards must be one of group, batch, none'],
    [['--turn-credit', 'all'], '--turn-credit must be one of return-to-go, turn'],
    [['--entropy-top-q', '1.5'], '--entropy-top-q is a share of the tokens, in (0, 1]'],
    [['--max-tasks-per-step', '9'], '--max-tasks-per-step bounds --dynamic-sampling'],
    [['--stale-rollouts', 'downweight'], 'give --max-staleness too'],
    [['--echo-weight=-1'], '--echo-weight must be a number ≥ 0'],
  ];
  for (const [flags, message] of cases) {
    const { code, stderr } = await tabrl([...base, ...flags]);
    expect(code, flags.join(' ')).toBe(2);
    expect(stderr).toContain(message);
  }
});

test('given knobs reach the trainer: metrics show dynamic sampling, the saved settings keep them', { timeout: 120_000 }, async () => {
  const out = join(mkdtempSync(join(tmpdir(), 'tabrl-knobs-')), 'run');
  const { code, stdout, stderr } = await tabrl([
    'train', 'reverse-text', '--model', 'tiny', '--env-args', '{"compact": true, "minLength": 4, "maxLength": 6, "numTasks": 40}',
    '--sft-steps', '0', '--steps', '2', '--tasks-per-step', '1', '--group', '2', '--max-tokens', '4', '--eval-tasks', '0', '--max-async', '0',
    '--loss-type', 'grpo', '--scale-rewards', 'batch', '--importance-sampling', 'sequence', '--dynamic-sampling', '--max-tasks-per-step', '3',
    '--entropy-top-q', '0.5', '--echo-weight', '0.1', '--mask-truncated', '--turn-credit', 'turn', '--out', out, '--json',
  ]);
  expect(stderr).not.toContain('Error');
  expect(code).toBe(0);
  const grpo = stdout.trim().split('\n').map((line) => JSON.parse(line)).filter((line) => line.phase === 'grpo');
  expect(grpo).toHaveLength(2);
  for (const step of grpo) {
    expect(step.tasksDrawn).toBeGreaterThanOrEqual(1);
    expect(step.tasksDrawn).toBeLessThanOrEqual(3);
    expect(step.rollouts).toBe(2 * step.tasksDrawn);
    for (const key of ['clipFractionLow', 'clipFractionHigh', 'entropy', 'truncatedFraction', 'zeroStdFraction', 'staleness', 'tokensPerSecond', 'echoLoss']) expect(typeof step[key], key).toBe('number');
    expect(step.completionLength.max).toBeGreaterThan(0);
  }
  const state = JSON.parse(readFileSync(join(out, 'checkpoint', 'state.json'), 'utf8'));
  expect(state.run.settings.options.grpo).toMatchObject({ lossType: 'grpo', scaleRewards: 'batch', importanceSampling: 'sequence', dynamicSampling: true, maxTasksPerStep: 3, entropyTopQ: 0.5, echoWeight: 0.1, maskTruncated: true, turnCredit: 'turn' });
});

test('the progress line shows the diagnostics of a step', async () => {
  const { describeGrpoStep } = await import('../../../src/cli/train.ts');
  const line = describeGrpoStep({
    step: 3, reward: { mean: 0.5, std: 0.25 }, rewards: {}, passRate: 0.25, advantage: { meanAbs: 0.2, std: 0.3 }, loss: -0.0123, kl: 0, entropy: 1.234,
    clipFraction: 0.15, clipFractionLow: 0.05, clipFractionHigh: 0.1, gradNorm: 0.5, learningRate: 1e-3, tokensSampled: 100, tokensTrained: 80, tokensPerSecond: 250,
    timings: { sampleMs: 1000, updateMs: 500, stepMs: 1500, scoringMs: 10 }, staleness: 1, completionLength: { mean: 6.5, max: 12 }, truncatedFraction: 0.25,
    zeroStdFraction: 0.5, tasksDrawn: 4, echoLoss: 0.75, rollouts: 32, rolloutsWithErrors: 0, groupsDropped: 2,
  });
  expect(line).toBe('reward 0.500 ± 0.250  pass 0.25  loss -0.0123  H 1.23  clip 5/10%  len 6.5/12  trunc 25%  flat 50%  stale 1  echo 0.750  250 tok/s  1.5 s');
});
