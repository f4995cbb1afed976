// `tabrl review`: build one queue from a red team, an audit and a calibration; accept a hack into criteria; reject a task out of the environment file.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from 'vitest';
import { evaluate, ScriptedClient } from '../../../src/envs/index.ts';
import { qaEnvironmentFile } from '../../../src/envs/studio/index.ts';
import { recordsToJsonl } from '../../../src/envs/results-record.ts';
import loadGullibleJudge from '../../../src/ui/features/lessons/sources/gullible-judge.ts';
import { judgedWritingExpertPolicy } from '../../../src/envs/builtin/judged-writing.ts';
import { runTabrl } from '../../support/tabrl-cli.ts';

const tabrl = (args: string[]) => runTabrl(args, { timeoutMs: 90_000 });
const lastLine = (text: string) => text.trim().split('\n').at(-1)!;
const LESSON = fileURLToPath(new URL('../../../src/ui/features/lessons/sources/gullible-judge.ts', import.meta.url));

let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tabrl-review-'));
  writeFileSync(join(dir, 'gullible.ts'), readFileSync(LESSON, 'utf8').replace("from '../../../../envs/index.ts'", "from 'tabrl'"));
  const lesson = loadGullibleJudge({ numEvalTasks: 4 });
  const hacked = await evaluate(lesson, new ScriptedClient(['Golden dreams whisper softly, gentle silver gleams glow in golden dreams and soft gentle whispers forever']), { numTasks: 4 });
  const honest = await evaluate(lesson, new ScriptedClient(judgedWritingExpertPolicy), { numTasks: 4 });
  writeFileSync(join(dir, 'results.jsonl'), recordsToJsonl([...hacked.records, ...honest.records.map((record) => ({ ...record, rolloutIndex: 1 }))]));
  // A calibration of a studio environment file: one task mid-band, one at the band's edge.
  writeFileSync(join(dir, 'env.ts'), qaEnvironmentFile([{ question: 'When was it founded?', answer: '1962' }, { question: 'Who founded it?', answer: 'Halvorsen' }], { name: 'station' }));
  const calibration = join(dir, 'calibration');
  mkdirSync(calibration);
  writeFileSync(join(calibration, 'report.json'), JSON.stringify({ keep: [0.1, 0.9] }));
  writeFileSync(join(calibration, 'calibration.jsonl'), [
    { taskIndex: 0, question: 'When was it founded?', rollouts: 8, passRate: 0.5, rewardMean: 0.5, rewardStd: 0.5, learnability: 1, label: 'learnable', errors: 0 },
    { taskIndex: 1, question: 'Who founded it?', rollouts: 8, passRate: 0.125, rewardMean: 0.125, rewardStd: 0.33, learnability: 0.44, label: 'learnable', errors: 0 },
  ].map((line) => JSON.stringify(line)).join('\n'));
});

describe('tabrl review', () => {
  test('build ranks the red team first and the edge-of-band task last; accept and reject write back', { timeout: 180_000 }, async () => {
    expect((await tabrl(['redteam', join(dir, 'gullible.ts'), '--attacker-model', 'heuristic', '--reviewer-model', 'heuristic', '--no-criteria', '--out', join(dir, 'rt')])).code).toBe(0);
    expect((await tabrl(['audit', join(dir, 'results.jsonl'), '--judge-model', 'heuristic', '--top', '4', '--random', '4', '--no-criteria', '--out', join(dir, 'audit')])).code).toBe(0);
    const review = join(dir, 'review');
    const build = await tabrl(['review', 'build', '--redteam', join(dir, 'rt'), '--audit', join(dir, 'audit'), '--calibration', join(dir, 'calibration'), '--out', review]);
    expect(build.code, build.stderr).toBe(0);
    const items = readFileSync(join(review, 'review.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { id: string; kind: string; rank: number; status: string });
    const kinds = [...new Set(items.map((item) => item.kind))];
    expect(kinds).toEqual(['back-door', 'not-earned', 'edge-of-band']);
    expect(items.filter((item) => item.kind === 'not-earned')).toHaveLength(4);
    expect(items.at(-1)).toMatchObject({ id: 'edge-of-band:1', status: 'open' });

    const accept = await tabrl(['review', 'accept', review, '1', '--judge-model', 'heuristic']);
    expect(accept.code, accept.stderr).toBe(0);
    const criteria = JSON.parse(readFileSync(join(review, 'criteria.json'), 'utf8')) as { name: string }[];
    expect(criteria.map((criterion) => criterion.name)).toContain('uses_required_word');
    expect(readFileSync(join(review, 'criteria-snippet.ts'), 'utf8')).toContain('gateByCriteria(rubric, criteria)');

    const noEnv = await tabrl(['review', 'reject', review, 'edge-of-band:1']);
    expect(noEnv.code).toBe(2);
    expect(lastLine(noEnv.stderr)).toContain('a rejected task leaves the environment; give the environment file with --env FILE');
    const reject = await tabrl(['review', 'reject', review, 'edge-of-band:1', '--env', join(dir, 'env.ts')]);
    expect(reject.code, reject.stderr).toBe(0);
    expect(readFileSync(join(dir, 'env.ts'), 'utf8')).not.toContain('Who founded it?');
    expect(readFileSync(join(dir, 'env.ts'), 'utf8')).toContain('When was it founded?');

    const after = readFileSync(join(review, 'review.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { id: string; rank: number; status: string });
    expect(after.find((item) => item.rank === 1)!.status).toBe('accepted');
    expect(after.find((item) => item.id === 'edge-of-band:1')!.status).toBe('rejected');
    const show = await tabrl(['review', 'show', review]);
    expect(show.stdout).not.toContain('edge-of-band:1');
    expect(show.stdout.trim().split('\n')).toHaveLength(items.length - 2);
    expect((await tabrl(['review', 'accept', review, 'no-such-item'])).stderr).toContain('review: no item "no-such-item"');
  });

  test('build --simulate: a tool below 80% fidelity in fidelity.json is in the queue, and deciding it touches no file', async () => {
    const simulate = join(dir, 'simulate');
    mkdirSync(simulate);
    const row = (tool: string, fields: number) => ({ tool, calls: 5, exact: fields, fields, judged: null, garbage: 0 });
    // As tabrl simulate writes it (status, counts and rounds of rows; the examples are left out here).
    writeFileSync(join(simulate, 'fidelity.json'), JSON.stringify({ status: 'completed', rounds: [{ round: 1, corrections: 0, rows: [row('get_weather', 0.4), row('search_docs', 0.95)], overall: row('*', 0.7) }], corrections: [] }));
    const review = join(dir, 'review-tools');
    const build = await tabrl(['review', 'build', '--simulate', simulate, '--out', review]);
    expect(build.code, build.stderr).toBe(0);
    expect(build.stdout).toContain('1. low-fidelity:get_weather [open] 40% fields agreeing on 5 held-out calls');
    expect(build.stdout).not.toContain('search_docs');
    const reject = await tabrl(['review', 'reject', review, 'low-fidelity:get_weather']);
    expect(reject.code, reject.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(review, 'review.jsonl'), 'utf8'))).toMatchObject({ id: 'low-fidelity:get_weather', subject: 'tool', status: 'rejected' });
    writeFileSync(join(simulate, 'fidelity.json'), JSON.stringify({ status: 'failed', rounds: [] }));
    expect(lastLine((await tabrl(['review', 'build', '--simulate', simulate, '--out', join(dir, 'review-none')])).stderr)).toContain('fidelity.json holds no measured round yet');
  });
});
