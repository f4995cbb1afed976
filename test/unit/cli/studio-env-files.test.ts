// The environment files the studio writes type-check against the library as they are, in every variant.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { calibratedBuiltinEnvironmentFile, calibratedEnvironmentFile, qaEnvironmentFile, simulatedEnvironmentFile } from '../../../src/envs/index.ts';
import { typecheckEnvironmentFile } from '../../../src/cli/typecheck-env.ts';

const SIMULATED = {
  name: 'simulated',
  tasks: [{ prompt: [{ role: 'user' as const, content: 'Status of A?' }], answer: 'lost', info: { planted: [{ tool: 'track', arguments: { id: 'A' }, result: '{"status":"lost"}' }] } }],
  tools: [{ type: 'function' as const, function: { name: 'track', description: 'a parcel\'s status', parameters: { type: 'object', properties: { id: { type: 'string' } } } } }],
  records: [{ tool: 'track', arguments: { id: 'B' }, result: '{"status":"late"}', line: 3 }],
};

describe('generated environment files', () => {
  test('exact-match and judge-scored question files, prompt tasks from traces, simulated-tool files, and calibrated wrappers of a file and of a built-in type-check', { timeout: 180_000 }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'tabrl-studio-files-'));
    const tasks = [{ question: 'When was it "founded"?', answer: '1962', info: { source: { document: 'a.md', start: 0, end: 10 } } }];
    const files = {
      'exact.ts': qaEnvironmentFile(tasks, { name: 'exact', origin: 'from a.md' }),
      'judged.ts': qaEnvironmentFile(tasks, { scoring: 'judge' }),
      'traces.ts': qaEnvironmentFile([{ prompt: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Reset my password?' }], answer: 'Click "forgot".' }], { scoring: 'judge-grade', name: 'trace-tasks' }),
      'calibrated/env.ts': calibratedEnvironmentFile('../exact.ts', tasks, 'K = 4'),
      'calibrated-builtin.ts': calibratedBuiltinEnvironmentFile('countdown', [{ question: 'Numbers: 3 7 / Target: 10', answer: '10' }], 'K = 4', { difficulty: 2, seed: 5 }),
      'simulated-judged.ts': simulatedEnvironmentFile({ ...SIMULATED, scoring: 'judge-grade', defaultSimulator: 'judge' }),
      'simulated-planted.ts': simulatedEnvironmentFile({ ...SIMULATED, scoring: 'exact', corrections: [{ tool: 'track', arguments: { id: 'B' }, simulated: '{}', result: '{"status":"late"}' }] }),
    };
    mkdirSync(join(dir, 'calibrated'));
    for (const [name, source] of Object.entries(files)) writeFileSync(join(dir, name), source);
    for (const name of Object.keys(files)) expect(typecheckEnvironmentFile(join(dir, name)), name).toEqual([]);
    expect(files['traces.ts']).toContain('"prompt": [');
    expect(files['traces.ts']).toContain('passThreshold: 0.7');
    expect(files['traces.ts']).not.toContain('const JUDGE_PROMPT');
    expect(files['judged.ts']).toContain("if (!args.judgeClient) throw new Error('studio-tasks is scored by a judge");
  });
});
