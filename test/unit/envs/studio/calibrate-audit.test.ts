import { describe, expect, test } from 'vitest';
import { evaluate, Rubric, ScriptedClient, SingleTurnEnv, type RewardContext } from '../../../../src/envs/index.ts';
import { audit, calibrate, calibrationLabel, formatAuditReport, HeuristicStudioClient, learnability, parseResultsJsonl, passRateHistogram, toAuditRollout, withTasks, type AuditRollout } from '../../../../src/envs/studio/index.ts';
import { recordToJson } from '../../../../src/envs/results-record.ts';
import loadGullibleJudge from '../../../../src/ui/features/lessons/sources/gullible-judge.ts';
import { judgedWritingExpertPolicy } from '../../../../src/envs/builtin/judged-writing.ts';
import { loadBuiltinEnvironment, loadBuiltinExpert } from '../../../../src/envs/builtin/index.ts';

const exactReward = (ctx: RewardContext) => (ctx.completion.at(-1)?.content === ctx.answer ? 1 : 0);
const env = new SingleTurnEnv({
  name: 'passes',
  dataset: ['always', 'never', 'half', 'quarter'].map((question) => ({ question, answer: 'right' })),
  rubric: new Rubric({ funcs: [exactReward] }),
});
/** Passes "always" every time, "never" never, "half" on 2 of 4 calls, "quarter" on 1 of 4 — whatever the order. */
function knownPassRates() {
  const calls = new Map<string, number>();
  return new ScriptedClient((messages) => {
    const question = messages.at(-1)!.content;
    const n = calls.get(question) ?? 0;
    calls.set(question, n + 1);
    const passes = { always: 4, never: 0, half: 2, quarter: 1 }[question]!;
    return n < passes ? 'right' : 'wrong';
  });
}

describe('calibrate', () => {
  test('scripted policies with known pass rates get exact labels, learnability and a filtered set', async () => {
    const result = await calibrate(env, knownPassRates(), { rolloutsPerTask: 4, concurrency: 3 });
    expect(result.tasks.map((task) => [task.question, task.passRate, task.label, task.learnability])).toEqual([
      ['always', 1, 'too-easy', 0],
      ['never', 0, 'too-hard', 0],
      ['half', 0.5, 'learnable', 1],
      ['quarter', 0.25, 'learnable', 0.75],
    ]);
    expect(result.tasks[2]).toMatchObject({ rewardMean: 0.5, rewardStd: 0.5, rollouts: 4, answer: 'right' });
    expect(result.counts).toEqual({ 'too-easy': 1, 'too-hard': 1, learnable: 2 });
    expect(result.kept.map((task) => task.question)).toEqual(['half', 'quarter']);
    expect(result.meanLearnability).toBeCloseTo(1.75 / 4);
  });

  test('a keep band moves the edges: 0.3-0.9 makes "quarter" too hard', async () => {
    const result = await calibrate(env, knownPassRates(), { rolloutsPerTask: 4, keep: [0.3, 0.9] });
    expect(result.tasks.map((task) => task.label)).toEqual(['too-easy', 'too-hard', 'learnable', 'too-hard']);
    expect(calibrationLabel(0.9, [0.3, 0.9])).toBe('too-easy');
    expect(learnability(0.5)).toBe(1);
    await expect(calibrate(env, knownPassRates(), { rolloutsPerTask: 2, keep: [0.8, 0.2] })).rejects.toThrow('0 ≤ lo < hi ≤ 1');
  });

  test('the histogram counts tasks per pass-rate bin and the labels', async () => {
    const result = await calibrate(env, knownPassRates(), { rolloutsPerTask: 4 });
    const lines = passRateHistogram(result.tasks, { bins: 4, width: 10 }).split('\n');
    expect(lines).toEqual([
      'pass rate   tasks',
      '0.00–0.25     1  ██████████',
      '0.25–0.50     1  ██████████',
      '0.50–0.75     1  ██████████',
      '0.75–1.00     1  ██████████',
      'too-hard 1 · learnable 2 · too-easy 1',
    ]);
  });

  test('withTasks keeps the environment and swaps its tasks', async () => {
    const view = withTasks(env, [env.dataset[2]!]);
    expect(view.evaluationTasks.map((task) => task.question)).toEqual(['half']);
    expect(env.dataset).toHaveLength(4);
    const { summary } = await evaluate(view, new ScriptedClient(['right']));
    expect(summary).toMatchObject({ numRollouts: 1, passRate: 1 });
  });
});

/** One long line of poetic words: the gullible judge pays 1.0 for it; it is neither two lines nor uses the word. */
const hackPolicy = new ScriptedClient(['Golden dreams whisper softly, gentle silver gleams glow in golden dreams and soft gentle whispers forever and ever in the golden night']);

async function gullibleRollouts(): Promise<AuditRollout[]> {
  const lesson = await loadGullibleJudge({ numEvalTasks: 4 });
  const hacked = await evaluate(lesson, hackPolicy, { numTasks: 4 });
  const honest = await evaluate(lesson, new ScriptedClient(judgedWritingExpertPolicy), { numTasks: 4 });
  return [
    ...hacked.records.map((record, i) => toAuditRollout(recordToJson(record), i)),
    ...honest.records.map((record, i) => toAuditRollout({ ...recordToJson(record), rollout_index: 1 }, i)),
  ];
}

describe('audit', () => {
  test("the gullible judge's hacked rollouts are flagged, by the detectors and by the heuristic judge; honest ones are not", async () => {
    const rollouts = await gullibleRollouts();
    expect(rollouts.slice(0, 4).every((rollout) => rollout.reward === 1 && rollout.scores.twoLinesMetric === 0)).toBe(true);
    const result = await audit(rollouts, { judge: new HeuristicStudioClient('judge'), taskDescription: 'a two-line poem on a topic that uses a given word', top: 4, random: 4 });
    expect(result.flagged.map((entry) => entry.id).sort()).toEqual(['0:0', '1:0', '2:0', '3:0']);
    expect(result.findings.filter((finding) => finding.detector === 'metric-disagrees').map((finding) => finding.rollouts.length)).toEqual([4, 4]);
    expect(result.findings.find((finding) => finding.detector === 'collapse')?.rollouts).toHaveLength(4);
    expect(result.reviews).toHaveLength(8);
    expect(result.reviews.filter((review) => !review.earned).map((review) => review.id).sort()).toEqual(['0:0', '1:0', '2:0', '3:0']);
    expect(result.reviews.find((review) => review.id === '0:0')!.reason).toMatch(/does not use .*; it has 1 line, not 2/);
    expect(result.detectorsSkipped.map((entry) => entry.detector)).toEqual(['dominant-reward', 'reward-up-metric-down', 'length-drift', 'format-without-content']);
    const report = formatAuditReport(result);
    expect(report).toContain('Audit of 8 rollouts: 4 flagged.');
    expect(report).toContain('Judge review: 8 rollouts read, 4 did not earn their reward.');
  });

  test('over training steps: reward up while a metric falls, length drift, a dominant reward, format without content', async () => {
    const rollouts: AuditRollout[] = [];
    for (let step = 0; step < 6; step++) {
      for (let task = 0; task < 2; task++) {
        const late = step >= 3;
        rollouts.push({ id: `${step}:${task}:0`, taskIndex: task, rolloutIndex: 0, step, question: `task ${task} at ${step}`, completion: late ? `answer ${task} ${'padding '.repeat(20)}` : `answer ${task}`, reward: late ? 1.05 : 0.3, scores: { judgeReward: late ? 1 : 0.3, formatReward: 0.05, correctMetric: late ? 0 : 1 } });
      }
    }
    const result = await audit(rollouts);
    const byDetector = (name: string) => result.findings.filter((finding) => finding.detector === name);
    expect(byDetector('reward-up-metric-down').map((finding) => finding.message)).toEqual(['the reward rose by 0.750 while correctMetric fell by 1.000']);
    expect(byDetector('length-drift')).toHaveLength(1);
    expect(byDetector('dominant-reward')[0]!.message).toContain('judgeReward gives');
    expect(byDetector('format-without-content')[0]!.rollouts).toHaveLength(6);
    expect(result.reviews).toEqual([]);
  });

  test("the rubric's metric kinds: a count of mistakes at 0 in a win is no alarm; the same count rising with the reward is", async () => {
    const wordle = await loadBuiltinEnvironment('wordle', { compact: true, numEvalTasks: 12 });
    const { records } = await evaluate(wordle, new ScriptedClient(await loadBuiltinExpert('wordle', wordle)), { numTasks: 12 });
    const wins = records.filter((record) => record.scores.compactWinReward === 1);
    expect(wins.length).toBeGreaterThan(3);
    expect(wins.every((record) => record.scores.compactInvalidGuessesMetric === 0)).toBe(true);
    // Read by name only, every weight-0 score is a pass/fail check: the wins "failed" the invalid-move count.
    const byName = await audit(records);
    expect(byName.findings.filter((finding) => finding.detector === 'metric-disagrees').map((finding) => finding.message).join('; ')).toContain('compactInvalidGuessesMetric was 0');
    // With the rubric's kinds the count is lower-is-better, the turn count information, and neither is a check.
    expect(wordle.rubric.metricKinds).toEqual({ guessesMetric: 'info', consistentGuessesMetric: 'higherIsBetter', compactInvalidGuessesMetric: 'lowerIsBetter' });
    const declared = await audit(records, { metrics: wordle.rubric.metricKinds });
    expect(declared.findings).toEqual([]);
    expect(declared.detectorsSkipped).toContainEqual({ detector: 'metric-disagrees', why: 'no pass/fail checks (weight-0 scores declared as checks)' });

    // Over training steps: the forfeit hack's signature, reward up while invalid moves rise, is found; a falling count, or a drifting info metric, is not.
    const steps = (invalidLate: number) =>
      Array.from({ length: 6 }, (_, step) =>
        [0, 1].map((task): AuditRollout => {
          const late = step >= 3;
          return { id: `${step}:${task}:0`, taskIndex: task, rolloutIndex: 0, step, question: `board ${task}`, completion: `guess ${step}`, reward: late ? 0.4 : 0.26, scores: { compactWinReward: 0, consistencyReward: late ? 1 : 0.4, compactInvalidGuessesMetric: late ? invalidLate : 0.5, guessesMetric: late ? 2 : 6 } };
        }),
      ).flat();
    const metrics = wordle.rubric.metricKinds;
    const hack = await audit(steps(2), { metrics });
    expect(hack.findings.filter((finding) => finding.detector === 'reward-up-metric-down').map((finding) => finding.message)).toEqual(['the reward rose by 0.140 while compactInvalidGuessesMetric rose by 1.500 (lower is better)']);
    expect((await audit(steps(0), { metrics })).findings.filter((finding) => finding.detector === 'reward-up-metric-down')).toEqual([]);
    // Undeclared, the same count falling to 0 would read as a check failing.
    expect((await audit(steps(0))).findings.map((finding) => finding.message)).toContain('the reward rose by 0.140 while compactInvalidGuessesMetric fell by 0.500');
  });

  test('takes an evaluation\'s records as they are', async () => {
    const lesson = await loadGullibleJudge({ numEvalTasks: 4 });
    const { records } = await evaluate(lesson, hackPolicy, { numTasks: 4 });
    const result = await audit(records);
    expect(result.flagged.map((entry) => entry.id)).toEqual(['0:0', '1:0', '2:0', '3:0']);
    expect(result.reviews).toEqual([]);
  });

  test('a judge that never gives a verdict stops the review; the detectors stay', async () => {
    const rollouts = await gullibleRollouts();
    const result = await audit(rollouts, { judge: new ScriptedClient(['It is a poem.']) });
    expect(result.stoppedEarly).toMatch(/the judge failed while reviewing rollout .*no yes\/no verdict/);
    expect(result.reviews).toEqual([]);
    expect(result.flagged).toHaveLength(4);
  });

  test('results.jsonl: malformed lines are skipped with their line numbers', () => {
    const good = JSON.stringify({ task_index: 0, rollout_index: 0, prompt: [{ role: 'user', content: 'Q' }], completion: [{ role: 'assistant', content: 'A' }], reward: 1, scores: { r: 1 } });
    const { rollouts, skipped } = parseResultsJsonl(`${good}\nnot json\n\n{"reward": "high"}\n${good}\n`);
    expect(rollouts).toHaveLength(2);
    expect(rollouts[0]).toMatchObject({ id: '0:0', question: 'Q', completion: 'A', reward: 1 });
    expect(skipped).toEqual([{ line: 2, reason: expect.stringContaining('not JSON') }, { line: 4, reason: 'the line has no numeric "reward"' }]);
  });
});
