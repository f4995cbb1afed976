// `tabrl redteam`: the real binary on lesson 4's environment file (the gullible judge) with the offline attacker and reviewer.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from 'vitest';
import { startFakeOpenAIServer } from '../../support/fake-openai-server.ts';
import { runTabrl } from '../../support/tabrl-cli.ts';

const tabrl = (args: string[]) => runTabrl(args, { timeoutMs: 90_000 });
const lastLine = (text: string) => text.trim().split('\n').at(-1)!;
const LESSON = fileURLToPath(new URL('../../../src/ui/features/lessons/sources/gullible-judge.ts', import.meta.url));

let dir: string;
let lessonFile: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tabrl-redteam-'));
  lessonFile = join(dir, 'gullible-judge.ts');
  // The lesson as the editor shows it: an environment file importing 'tabrl'.
  writeFileSync(lessonFile, readFileSync(LESSON, 'utf8').replace("from '../../../../envs/index.ts'", "from 'tabrl'"));
});

describe('tabrl redteam', () => {
  test("finds lesson 4's back door, writes report.json with it and criteria to gate the reward", { timeout: 120_000 }, async () => {
    const out = join(dir, 'rt');
    const run = await tabrl(['redteam', lessonFile, '--attacker-model', 'heuristic', '--reviewer-model', 'heuristic', '--out', out]);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as { status: string; calls: { attacker: number }; backDoors: { reply: string; reward: number; payingFunction: string; verdict: string }[] };
    expect(report.status).toBe('completed');
    expect(report.calls.attacker).toBe(22);
    expect(report.backDoors.length).toBeGreaterThan(0);
    expect(report.backDoors[0]).toMatchObject({ payingFunction: 'judgeReward', verdict: 'not earned' });
    expect(report.backDoors[0]!.reward).toBeGreaterThanOrEqual(0.8);
    expect(readFileSync(join(out, 'candidates.jsonl'), 'utf8').trim().split('\n')).toHaveLength(22);
    expect(run.stdout).toMatch(/back doors? \(first after \d+ attacker calls\)/);
    expect(existsSync(join(out, 'criteria.json'))).toBe(true);
    expect(readFileSync(join(out, 'criteria-snippet.ts'), 'utf8')).toContain('gateByCriteria(rubric, criteria)');
  });

  test('a dead attacker stops with a one-line reason; --help; a missing attacker is a usage error', { timeout: 120_000 }, async () => {
    const gone = await startFakeOpenAIServer(() => 'unused');
    const url = gone.baseURL;
    await gone.close();
    const dead = await tabrl(['redteam', lessonFile, '--attacker-base-url', url, '--attacker-model', 'attacker', '--timeout', '2', '--out', join(dir, 'rt-dead')]);
    expect(dead.code).toBe(1);
    expect(lastLine(dead.stderr)).toMatch(/^tabrl redteam: stopped: the attacker failed \(\w+\): .*check --attacker-base-url and --attacker-model/);
    const help = await tabrl(['redteam', '--help']);
    expect(help.stdout).toContain('--attacker-base-url URL');
    expect(help.stdout).toContain('--rounds R');
    const none = await tabrl(['redteam', lessonFile, '--out', join(dir, 'rt-none')]);
    expect(none.code).toBe(2);
    expect(lastLine(none.stderr)).toContain('--attacker-model is required');
  });
});
