// The environment files the studio writes type-check against the library as they are, in every variant.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { evaluate, ScriptedClient } from '../../../src/envs/index.ts';
import { calibratedBuiltinEnvironmentFile, calibratedEnvironmentFile, qaEnvironmentFile, simulatedEnvironmentFile, synthesizeTasks } from '../../../src/envs/studio/index.ts';
import { typecheckEnvironmentFile } from '../../../src/cli/typecheck-env.ts';
import { closeEnvironment, loadEnvironmentSpec } from '../../../src/cli/load-environment.ts';

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
      // Planted tasks with a write among them (info.goal: reachedStateReward joins the rubric), simulated by the lent simulator.
      'simulated-planted.ts': simulatedEnvironmentFile({
        ...SIMULATED,
        tasks: [...SIMULATED.tasks, { prompt: [{ role: 'user' as const, content: 'Mark C as held.' }], info: { planted: [], goal: { tool: 'track', arguments: { id: 'C', status: 'held' } } } }],
        scoring: 'exact',
        defaultSimulator: 'simulator',
        corrections: [{ tool: 'track', arguments: { id: 'B' }, simulated: '{}', result: '{"status":"late"}' }],
      }),
    };
    mkdirSync(join(dir, 'calibrated'));
    for (const [name, source] of Object.entries(files)) writeFileSync(join(dir, name), source);
    for (const name of Object.keys(files)) expect(typecheckEnvironmentFile(join(dir, name)), name).toEqual([]);
    expect(files['traces.ts']).toContain('"prompt": [');
    expect(files['traces.ts']).toContain('passThreshold: 0.7');
    expect(files['traces.ts']).not.toContain('const JUDGE_PROMPT');
    expect(files['judged.ts']).toContain("if (!args.judgeClient) throw new Error('studio-tasks is scored by a judge");
    expect(files['simulated-planted.ts']).toContain('{ fn: reachedStateReward, weight: 1 }');
  });
});

describe('the judge of a generated file', () => {
  // A judge that writes its reason, then "Verdict: yes|no", as the synthesis prompt asks.
  const reasoningJudge = new ScriptedClient((messages) => {
    const prompt = messages.at(-1)!.content;
    const reference = /Reference answer: (.*)/.exec(prompt)?.[1] ?? '';
    const response = /Response: ([\s\S]*?)\n\n/.exec(prompt)?.[1] ?? '';
    const same = reference !== '' && response.includes(reference);
    return `The response ${same ? 'gives' : 'does not give'} the reference's answer, ${reference}.\nVerdict: ${same ? 'yes' : 'no'}`;
  });

  test('a judge that passes synthesis scores the same answers in the file synthesis writes', { timeout: 120_000 }, async () => {
    const { tasks } = await synthesizeTasks({
      documents: [{ name: 'a.md', text: 'Kestrel Field Station was founded in 1962 by the botanist Ingrid Halvorsen.' }],
      generator: new ScriptedClient(['[{"question": "When was the station founded?", "answer": "1962"}]']),
      solver: new ScriptedClient((messages) => (messages.at(-1)!.content.includes('founded in 1962') ? 'It was 1962.' : 'I do not know.')),
      judge: reasoningJudge,
      k: 2,
    });
    expect(tasks.map((task) => task.kept)).toEqual([true]);
    const dir = mkdtempSync(join(tmpdir(), 'tabrl-studio-judge-'));
    writeFileSync(join(dir, 'env.ts'), qaEnvironmentFile([{ question: tasks[0]!.question, answer: tasks[0]!.answer }], { scoring: 'judge' }));
    const env = await loadEnvironmentSpec(join(dir, 'env.ts'), { judge: { client: reasoningJudge, model: 'judge' }, typecheck: false });
    try {
      const { records, summary } = await evaluate(env, new ScriptedClient(['Answer: in 1962', 'Answer: 1870']), { rolloutsPerTask: 2, concurrency: 1 });
      expect(records.map((record) => record.errors)).toEqual([[], []]);
      expect(records.map((record) => record.reward).sort()).toEqual([0, 1]);
      expect(summary.scores.exactMatchMetric).toBe(0); // "in 1962" is a paraphrase the judge accepts
    } finally {
      closeEnvironment(env);
    }
  });

  test("from traces: exact match against a free-text reference is an info metric, not a pass/fail check", { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tabrl-studio-traces-'));
    writeFileSync(join(dir, 'env.ts'), qaEnvironmentFile([{ prompt: [{ role: 'user', content: 'Reset my password?' }], answer: 'Click "forgot password" on the login page.' }], { scoring: 'judge-grade' }));
    const env = await loadEnvironmentSpec(join(dir, 'env.ts'), { judge: { client: new ScriptedClient(() => 'Score: 9'), model: 'judge' }, typecheck: false });
    try {
      expect(env.rubric.metricKinds).toEqual({ exactMatchMetric: 'info' });
    } finally {
      closeEnvironment(env);
    }
  });
});
