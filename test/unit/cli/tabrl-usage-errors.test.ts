// Usage mistakes a person makes at the shell: a typo'd command or flag names what was meant, a flag
// given twice with different values is refused (the last one used to win silently), and each is one
// message with exit code 2, never a stack trace.
import { spawn } from 'node:child_process';
import { describe, expect, test } from 'vitest';
import { closestName } from '../../../src/common/closest-name.ts';
import { shippedModelIds } from '../../../src/models/shipped-models.ts';
import { runTabrl, TABRL_BIN } from '../../support/tabrl-cli.ts';

describe('closestName', () => {
  test('finds the name a typo meant: a swap, a dropped or extra letter, a prefix; nothing for an unrelated word', () => {
    const commands = ['envs', 'eval', 'validate', 'train', 'generate', 'forward', 'synth', 'tasks', 'calibrate', 'audit'];
    expect(closestName('trian', commands)).toBe('train');
    expect(closestName('evl', commands)).toBe('eval');
    expect(closestName('generat', commands)).toBe('generate');
    expect(closestName('Calibrat', commands)).toBe('calibrate');
    expect(closestName('xyz', commands)).toBeUndefined();
    const flags = ['--steps', '--sft-steps', '--seed', '--out', '--lr'];
    expect(closestName('--stpes', flags)).toBe('--steps');
    expect(closestName('--step', flags)).toBe('--steps');
    expect(closestName('--output-dir', flags)).toBeUndefined();
  });
});

describe('tabrl usage errors', () => {
  test('a typo\'d command suggests the command', async () => {
    const run = await runTabrl(['trian', 'wordle']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('unknown command "trian"; did you mean `tabrl train`?');
  });

  test('a typo\'d flag suggests the flag, in one line without Node\'s parser wording', async () => {
    const run = await runTabrl(['train', 'wordle', '--model', 'tiny', '--stpes', '3']);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe('tabrl train: unknown option --stpes; did you mean --steps?\nRun `tabrl train --help` for the options.\n');
  });

  test('a flag given twice with different values is refused, naming both values', async () => {
    const run = await runTabrl(['eval', 'reverse-text', '--model', 'local:tiny', '-n', '1', '--out=/tmp/a', '--out', '/tmp/b']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--out is given twice, as "/tmp/a" and as "/tmp/b"; give it once');
  });

  test('generate --model (train\'s spelling) says the model is the first argument; envs refuses what it does not take', async () => {
    const generate = await runTabrl(['generate', '--model', 'tiny', '--prompt', 'hi']);
    expect(generate.code).toBe(2);
    expect(generate.stderr).toContain(`unknown option --model; the model is the first argument: tabrl generate <model-dir | tiny | ${shippedModelIds().join(' | ')}>`);
    const envs = await runTabrl(['envs', '--json']);
    expect(envs.code).toBe(2);
    expect(envs.stderr).toContain('tabrl envs: unknown option --json');
  });

  test('a reader that closes the pipe early (`| head`) stops the command quietly, not with an EPIPE stack trace', async () => {
    const child = spawn(process.execPath, [TABRL_BIN, 'generate', 'tiny', '--prompt', 'hi', '--max-tokens', '2'], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy(); // the reader is gone before the first line is printed
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).not.toContain('EPIPE');
    expect(code).toBe(0);
  });
});
