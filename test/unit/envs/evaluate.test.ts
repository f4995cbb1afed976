import { describe, expect, test } from 'vitest';
import { ChatClientError, evaluate, passAtKEstimate, Rubric, ScriptedClient, SingleTurnEnv, type ChatClient, type RewardContext, type RolloutRecord } from '../../../src/envs/index.ts';

const exactReward = (ctx: RewardContext) => (ctx.completion[0]?.content === ctx.answer ? 1 : 0);
const lengthMetric = (ctx: RewardContext) => ctx.completion[0]?.content.length ?? 0;
const makeEnv = () =>
  new SingleTurnEnv({
    name: 'echo',
    dataset: Array.from({ length: 6 }, (_, i) => ({ question: `say ${i}`, answer: String(i) })),
    evalDataset: Array.from({ length: 4 }, (_, i) => ({ question: `say ${i}`, answer: String(i) })),
    rubric: new Rubric({ funcs: [exactReward, lengthMetric], weights: [1, 0] }),
  });

describe('evaluate', () => {
  test('runs rollouts per task on the eval set and summarises rewards, metrics and pass@k', async () => {
    // Task i is answered right on rollouts 0..i-1 of 4: pass counts 0, 1, 2, 3.
    const seen = new Map<string, number>();
    const client = new ScriptedClient((messages) => {
      const question = messages.at(-1)!.content;
      const i = Number(question.split(' ')[1]);
      const count = seen.get(question) ?? 0;
      seen.set(question, count + 1);
      return count < i ? String(i) : 'wrong';
    });
    const progress: number[] = [];
    const streamed: RolloutRecord[] = [];
    const result = await evaluate(makeEnv(), client, {
      rolloutsPerTask: 4,
      concurrency: 1,
      onProgress: ({ done }) => progress.push(done),
      onRecord: (record) => {
        streamed.push(record);
      },
    });
    const { summary } = result;
    expect(summary.numTasks).toBe(4);
    expect(summary.numRollouts).toBe(16);
    expect(progress).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
    expect(streamed).toHaveLength(16);
    expect(summary.reward.mean).toBeCloseTo(6 / 16);
    expect(summary.reward.std).toBeCloseTo(Math.sqrt(6 / 16 - (6 / 16) ** 2));
    expect(summary.scores.exactReward).toBeCloseTo(6 / 16);
    expect(summary.passRate).toBeCloseTo(6 / 16);
    expect(summary.passAtK['1']).toBeCloseTo((0 + 1 / 4 + 2 / 4 + 3 / 4) / 4);
    expect(summary.passAtK['4']).toBeCloseTo(3 / 4);
    expect(Object.keys(summary.passAtK)).toEqual(['1', '2', '4']);
    expect(result.records.map((r) => [r.taskIndex, r.rolloutIndex]).slice(0, 5)).toEqual([[0, 0], [0, 1], [0, 2], [0, 3], [1, 0]]);
    expect(result.stoppedEarly).toBeUndefined();
  });

  test('keeps at most `concurrency` rollouts in flight and gives each rollout its own seed', async () => {
    let inFlight = 0;
    let peak = 0;
    const seeds: number[] = [];
    const client: ChatClient = {
      chat: {
        completions: {
          create: async (request) => {
            inFlight += 1;
            peak = Math.max(peak, inFlight);
            seeds.push(request.seed!);
            await new Promise((resolve) => setTimeout(resolve, 5));
            inFlight -= 1;
            return { id: '', model: '', choices: [{ index: 0, message: { role: 'assistant', content: 'x' }, finish_reason: 'stop' }] };
          },
        },
      },
    };
    await evaluate(makeEnv(), client, { numTasks: 3, rolloutsPerTask: 2, concurrency: 3, samplingArgs: { seed: 100 } });
    expect(peak).toBe(3);
    expect(seeds.sort((a, b) => a - b)).toEqual([100, 101, 102, 103, 104, 105]);
  });

  test('a fatal client error stops the run early and says why', async () => {
    const client: ChatClient = {
      chat: { completions: { create: async () => { throw new ChatClientError('http://x/v1 refused the API key (HTTP 401)', 'auth', 401); } } },
    };
    const result = await evaluate(makeEnv(), client, { rolloutsPerTask: 5, concurrency: 1 });
    expect(result.stoppedEarly).toContain('refused the API key');
    expect(result.records.length).toBeLessThan(20);
    expect(result.records[0]!.errors[0]).toMatchObject({ source: 'client', fatal: true });
  });

  test('timeouts in a row stop the run after the bound; a success in between resets the count', async () => {
    let calls = 0;
    const client: ChatClient = {
      chat: {
        completions: {
          create: async (request) => {
            calls += 1;
            // The second call answers; every other one times out.
            if (calls === 2) return new ScriptedClient(['1']).chat.completions.create(request);
            throw new ChatClientError('no answer from http://x/v1 within 50 ms', 'timeout');
          },
        },
      },
    };
    const result = await evaluate(makeEnv(), client, { rolloutsPerTask: 4, concurrency: 1, maxConsecutiveTimeouts: 3 });
    expect(result.stoppedEarly).toBe('3 rollouts in a row timed out; the last: no answer from http://x/v1 within 50 ms');
    expect(result.records).toHaveLength(5);
    expect(result.records[0]!.errors[0]).toMatchObject({ source: 'client', kind: 'timeout' });
    expect(result.summary.firstErrors).toEqual({ 'client (timeout)': 'no answer from http://x/v1 within 50 ms' });
  });

  test('previous records are skipped, kept in the records and counted in the summary', async () => {
    const client = new ScriptedClient((messages) => messages.at(-1)!.content.replace('say ', ''));
    const first = await evaluate(makeEnv(), client, { rolloutsPerTask: 2 });
    const asked: string[] = [];
    const counting = new ScriptedClient((messages) => {
      asked.push(messages.at(-1)!.content);
      return 'wrong';
    });
    const previous = first.records.filter((record) => record.taskIndex !== 2);
    const resumed = await evaluate(makeEnv(), counting, { rolloutsPerTask: 2, previous });
    expect(asked).toEqual(['say 2', 'say 2']);
    expect(resumed.records.map((record) => `${record.taskIndex}:${record.rolloutIndex}`)).toEqual(['0:0', '0:1', '1:0', '1:1', '2:0', '2:1', '3:0', '3:1']);
    expect(resumed.summary.numRollouts).toBe(8);
    expect(resumed.summary.passRate).toBe(0.75);
  });

  test('an outer abort signal cancels the run', async () => {
    const controller = new AbortController();
    const client = new ScriptedClient(() => {
      controller.abort();
      return 'x';
    });
    const result = await evaluate(makeEnv(), client, { rolloutsPerTask: 3, concurrency: 1, signal: controller.signal });
    expect(result.stoppedEarly).toBe('cancelled');
    expect(result.records.length).toBeLessThanOrEqual(1);
  });
});

describe('passAtKEstimate', () => {
  test('matches the closed form 1 - C(n-c, k) / C(n, k)', () => {
    const choose = (n: number, k: number): number => (k === 0 ? 1 : (choose(n - 1, k - 1) * n) / k);
    for (const [n, c, k] of [[10, 3, 1], [10, 3, 5], [8, 0, 2], [8, 8, 8], [5, 2, 4]] as const) {
      expect(passAtKEstimate(n, c, k)).toBeCloseTo(1 - choose(n - c, k) / choose(n, k), 10);
    }
    expect(() => passAtKEstimate(2, 1, 3)).toThrow('needs at least 3 samples');
  });
});
