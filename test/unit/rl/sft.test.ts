import { describe, expect, test } from 'vitest';
import { Rubric, ScriptedClient, SingleTurnEnv, type RewardContext, type Trajectory } from '../../../src/envs/index.ts';
import type { ModelConfig } from '../../../src/gpu/model/config.ts';
import { createCpuBackend } from '../../../src/gpu/model/cpu-backend.ts';
import { examplesToJsonl, makeWarmupData, parseSftJsonl } from '../../../src/rl/sft-data.ts';
import { evaluateSftLoss, runSft } from '../../../src/rl/sft-trainer.ts';
import { buildTrainSequence } from '../../../src/rl/token-batch.ts';

const CONFIG: ModelConfig = {
  architecture: 'LlamaForCausalLM', vocab_size: 12, hidden_size: 32, intermediate_size: 48, num_hidden_layers: 1,
  num_attention_heads: 2, num_key_value_heads: 2, head_dim: 16, rope_theta: 10000, rms_norm_eps: 1e-5,
  tie_word_embeddings: true, attention_bias: false, attention_output_bias: false, qk_norm: false,
};

describe('runSft', () => {
  test('drives the NLL of the assistant tokens down, and prompt tokens are not trained', async () => {
    const backend = await createCpuBackend(CONFIG, { seed: 1 });
    // "prompt" tokens 1,2 then the answer: the prompt reversed twice. Only the answer is trained.
    const sequences = [[1, 2], [3, 4], [5, 6], [7, 8]].map(([a, b]) => buildTrainSequence([{ promptIds: [a!, b!], completionIds: [b!, a!, 11], completionLogprobs: [0, 0, 0] }], 1));
    const before = await evaluateSftLoss(backend, sequences);
    const history = await runSft(backend, sequences, { steps: 40, batchSize: 4, microBatchSize: 2, schedule: { lr: 2e-2 } });
    const after = await evaluateSftLoss(backend, sequences);
    expect(before).toBeGreaterThan(2);
    expect(after).toBeLessThan(before / 4);
    expect(history[0]!.loss).toBeCloseTo(before, 4);
    expect(history.every((m) => m.tokensTrained === 12)).toBe(true);
  });

  test("microBatchFor chooses each step's micro-batch from its training length: the backward passes take its B, and the steps equal a fixed micro-batch of that size", async () => {
    // sequences of two lengths, so a step's T depends on which ones it drew
    const sequences = [[1, 2], [3, 4, 5], [5, 6], [7, 8, 9]].map((prompt) => buildTrainSequence([{ promptIds: prompt, completionIds: [...prompt].reverse().concat(11), completionLogprobs: prompt.map(() => 0).concat(0) }], 1));
    const run = async (sizing: { microBatchSize: number } | { microBatchFor: (T: number) => number }) => {
      const backend = await createCpuBackend(CONFIG, { seed: 1 });
      const shapes: Array<[number, number]> = [];
      const backward = backend.backward.bind(backend);
      backend.backward = (ids, targets, weights, B, T, temperature) => {
        shapes.push([B, T]);
        return backward(ids, targets, weights, B, T, temperature);
      };
      const history = await runSft(backend, sequences, { steps: 3, batchSize: 3, schedule: { lr: 2e-2 }, seed: 2, ...sizing });
      return { shapes, losses: history.map((m) => m.loss) };
    };
    const lengths: number[] = [];
    const chosen = await run({ microBatchFor: (T) => { lengths.push(T); return 2; } });
    const fixed = await run({ microBatchSize: 2 });
    expect(lengths).toHaveLength(3); // once per step
    expect(chosen.shapes.map(([B]) => B)).toEqual([2, 1, 2, 1, 2, 1]); // 3 sequences a step
    // the T it was asked for is the step's longest: every micro-batch's T is within it
    expect(Math.max(...chosen.shapes.slice(0, 2).map(([, T]) => T))).toBe(lengths[0]);
    expect(chosen.losses).toEqual(fixed.losses);
    expect(chosen.shapes).toEqual(fixed.shapes);
    // a chooser that gives no usable micro-batch stops the run with what it gave
    await expect(runSft(await createCpuBackend(CONFIG, { seed: 1 }), sequences, { steps: 1, batchSize: 3, microBatchFor: () => 0 })).rejects.toThrow('SFT: the micro-batch must be a positive integer, got 0');
  });
});

describe('SFT warm-up data', () => {
  const exactReward = (ctx: RewardContext) => (ctx.completion[0]!.content === ctx.answer ? 1 : 0);
  const env = new SingleTurnEnv({
    name: 'upper',
    dataset: ['a', 'b', 'c', 'd'].map((letter) => ({ question: letter, answer: letter.toUpperCase() })),
    rubric: new Rubric({ funcs: [exactReward] }),
  });

  test('keeps the transcripts of rollouts that pass and round-trips them through JSONL', async () => {
    // A flawed teacher: right on a, b, d; wrong on c.
    const teacher = new ScriptedClient((messages) => (messages.at(-1)!.content === 'c' ? 'see' : messages.at(-1)!.content.toUpperCase()));
    const data = await makeWarmupData(env, teacher, { rolloutsPerTask: 2 });
    expect(data.rollouts).toBe(8);
    expect(data.meanReward).toBeCloseTo(0.75);
    expect(data.examples.map((e) => e.messages.at(-1)!.content)).toEqual(['A', 'A', 'B', 'B', 'D', 'D']);
    expect(parseSftJsonl(examplesToJsonl(data.examples))).toEqual(data.examples);
  });

  test("the environment's own pass verdict decides, not the reward alone; minReward overrides it", async () => {
    // Passing is "the answer is A or B", whatever the reward says (an environment with its own isPassed, like the compact Wordle with the win weighted 0).
    class FirstTwoPass extends SingleTurnEnv {
      override isPassed(trajectory: Trajectory): boolean {
        return trajectory.completion[0]!.content === 'A' || trajectory.completion[0]!.content === 'B';
      }
    }
    const lowReward = new FirstTwoPass({ name: 'upper', dataset: env.dataset, rubric: new Rubric({ rewards: [{ fn: (ctx: RewardContext) => 0.1 * exactReward(ctx), name: 'tenthReward' }] }) });
    const teacher = new ScriptedClient((messages) => messages.at(-1)!.content.toUpperCase());
    expect((await makeWarmupData(lowReward, teacher)).examples.map((e) => e.messages.at(-1)!.content)).toEqual(['A', 'B']);
    expect((await makeWarmupData(lowReward, teacher, { minReward: 0.1 })).examples).toHaveLength(4);
  });

  test('bad JSONL names the line', () => {
    expect(() => parseSftJsonl('{"messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}]}\n{oops', 'data.jsonl')).toThrow('data.jsonl, line 2: not valid JSON');
    expect(() => parseSftJsonl('{"messages": [{"role": "user", "content": "x"}]}')).toThrow('line 1: no assistant message');
  });
});
