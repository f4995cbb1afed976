// `tabrl train`'s knob flags come from the table: each flag parses to the table's conversion,
// `--help` lists every knob with its default, and a value out of its limits is a usage error
// naming the flag and the limit.
import { expect, test, vi } from 'vitest';
import { CliError } from '../../../src/cli/cli-error.ts';
import { knobSettingsFromFlags, knobUsage } from '../../../src/cli/train-flags.ts';
import { runTrain } from '../../../src/cli/train.ts';
import { trainingRunOptionsFrom } from '../../../src/rl/training-options.ts';
import { describeDefault, KNOB_DEFAULTS, KNOB_NAMES, knobOf, TRAINING_KNOBS, withOverrides } from '../../../src/rl/training-settings.ts';

test('a flag parses to the value the table converts into the trainer option', () => {
  const settings = knobSettingsFromFlags({ lr: '2e-4', 'lr-schedule': 'cosine', steps: '12', 'keep-equal-groups': true, group: '4', 'micro-batch': '2' }, KNOB_DEFAULTS);
  expect(settings).toEqual({ ...KNOB_DEFAULTS, grpoLr: 2e-4, lrSchedule: 'cosine', grpoSteps: 12, keepEqualGroups: true, groupSize: 4, microBatch: 2 });
  const options = trainingRunOptionsFrom(settings);
  expect(options.grpo).toMatchObject({ steps: 12, groupSize: 4, microBatchSize: 2, dropUninformativeGroups: false, schedule: { lr: 2e-4, kind: 'cosine', totalSteps: 12 } });
});

test("flags override a lesson's row, which overrides the table's defaults", () => {
  const lesson = withOverrides({ grpoLr: 2e-4, sftSteps: 10 });
  const settings = knobSettingsFromFlags({ 'sft-steps': '3' }, lesson);
  expect(settings.grpoLr).toBe(2e-4);
  expect(settings.sftSteps).toBe(3);
  expect(settings.groupSize).toBe(KNOB_DEFAULTS.groupSize);
});

test('a value out of its limits is a usage error that names the flag and the limit', () => {
  const refused = (values: Record<string, string>) => {
    try {
      knobSettingsFromFlags(values, KNOB_DEFAULTS);
    } catch (error) {
      expect(error).toBeInstanceOf(CliError);
      expect((error as CliError).exitCode).toBe(2);
      return (error as Error).message;
    }
    throw new Error(`${JSON.stringify(values)} was accepted`);
  };
  expect(refused({ group: '1' })).toBe('--group must be an integer ≥ 2 and ≤ 64, got "1"');
  expect(refused({ lr: '2' })).toBe('--lr must be a number in (0, 1], got "2"');
  expect(refused({ lr: 'fast' })).toBe('--lr must be a number in (0, 1], got "fast"');
  expect(refused({ 'max-async': '9' })).toBe('--max-async must be an integer ≥ 0 and ≤ 8, got "9"');
  expect(refused({ 'lr-schedule': 'linear' })).toBe('--lr-schedule must be one of constant, cosine, got "linear"');
});

test('--help lists every knob of the table with its default', async () => {
  const printed: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((text: string) => void printed.push(text));
  try {
    expect(await runTrain(['--help'])).toBe(0);
  } finally {
    log.mockRestore();
  }
  const help = printed.join('\n');
  expect(help).toContain(knobUsage());
  for (const name of KNOB_NAMES) {
    const knob = knobOf(name);
    const lines = help.split('\n');
    const at = lines.findIndex((line) => line.trimStart().startsWith(`--${TRAINING_KNOBS[name].flag}${knob.kind === 'switch' ? '' : ' '}`));
    expect(at, name).toBeGreaterThanOrEqual(0);
    // The knob's text runs until the next line that starts a flag or a heading.
    const end = lines.findIndex((line, i) => i > at && !line.startsWith(' '.repeat(25)));
    const text = lines.slice(at, end).map((line) => line.trim()).join(' ');
    expect(text, name).toContain(`(default ${describeDefault(knob)}`);
  }
});
