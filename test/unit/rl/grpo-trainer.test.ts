// GRPO end to end on the CPU backend: a tiny random model learns, from reward alone, to emit a
// chosen letter. The policy here is a deliberately minimal letter-level sampler (full forward per
// token, no KV cache) so that the trainer is tested on its own; the real sampler is LocalChatClient.
import { describe, expect, test } from 'vitest';
import { Rubric, SingleTurnEnv, type ChatClient, type ChatRequest, type RewardContext } from '../../../src/envs/index.ts';
import { createRng } from '../../../src/envs/builtin/random.ts';
import type { ModelBackend } from '../../../src/gpu/model/backend.ts';
import type { ModelConfig } from '../../../src/gpu/model/config.ts';
import { createCpuBackend } from '../../../src/gpu/model/cpu-backend.ts';
import { GrpoTrainer, TrainingError, type GrpoStepMetrics, type SamplingPolicy } from '../../../src/rl/grpo-trainer.ts';

const V = 16; // letters a..p are token ids 0..15
const CONFIG: ModelConfig = {
  architecture: 'LlamaForCausalLM', vocab_size: V, hidden_size: 32, intermediate_size: 64, num_hidden_layers: 1,
  num_attention_heads: 4, num_key_value_heads: 2, head_dim: 8, rope_theta: 10000, rms_norm_eps: 1e-5,
  tie_word_embeddings: false, attention_bias: false, attention_output_bias: false, qk_norm: false,
};
const toIds = (text: string) => [...text].map((c) => c.charCodeAt(0) - 97);
const toText = (ids: number[]) => ids.map((id) => String.fromCharCode(97 + id)).join('');

/** Samples `max_tokens` letters after the prompt's letters from the backend's current weights. */
class LetterPolicy implements SamplingPolicy {
  policyVersion = 0;
  constructor(private readonly backend: ModelBackend) {}
  async syncWeights(): Promise<void> {
    this.policyVersion += 1;
  }
  readonly chat: ChatClient['chat'] = {
      completions: {
        create: async (request: ChatRequest) => {
          const promptIds = toIds(request.messages.at(-1)!.content);
          const rng = createRng(request.seed ?? 0);
          const temperature = request.temperature ?? 1;
          const ids = [...promptIds];
          const completionIds: number[] = [];
          const completionLogprobs: number[] = [];
          for (let t = 0; t < (request.max_tokens ?? 4); t++) {
            const logits = await this.backend.forward(Int32Array.from(ids), 1, ids.length);
            const last = Array.from(logits.subarray((ids.length - 1) * V, ids.length * V), (x) => x / temperature);
            const max = Math.max(...last);
            const logZ = max + Math.log(last.reduce((s, x) => s + Math.exp(x - max), 0));
            let u = rng.next();
            let id = V - 1;
            for (let v = 0; v < V; v++) {
              u -= Math.exp(last[v]! - logZ);
              if (u <= 0) { id = v; break; }
            }
            ids.push(id);
            completionIds.push(id);
            completionLogprobs.push(last[id]! - logZ);
          }
          return {
            id: 'x', model: 'letters',
            choices: [{ index: 0, message: { role: 'assistant' as const, content: toText(completionIds) }, finish_reason: 'length' as const, tokens: { promptIds, completionIds, completionLogprobs } }],
          };
        },
      },
  };
}

/** Reward: the share of emitted letters that are "d". */
const letterDReward = (ctx: RewardContext) => [...ctx.completion[0]!.content].filter((c) => c === 'd').length / ctx.completion[0]!.content.length;
const makeEnv = () => new SingleTurnEnv({ name: 'say-d', dataset: ['ab', 'ba', 'cc', 'ac'].map((question) => ({ question })), rubric: new Rubric({ funcs: [letterDReward] }) });

describe('GrpoTrainer', () => {
  test('a tiny model learns to say "d" from reward alone, on-policy, with every metric reported', async () => {
    const backend = await createCpuBackend(CONFIG, { seed: 3 });
    const policy = new LetterPolicy(backend);
    const metrics: GrpoStepMetrics[] = [];
    const trainer = new GrpoTrainer(makeEnv(), backend, policy, {
      steps: 30, tasksPerStep: 2, groupSize: 8, maxTokens: 4, schedule: { lr: 3e-2 }, maxAsync: 0, microBatchSize: 5, seed: 1, weightDecay: 0,
    });
    await trainer.run({ onStep: (m) => { metrics.push(m); } });

    expect(metrics.map((m) => m.step)).toEqual(Array.from({ length: 30 }, (_, i) => i));
    const first = mean(metrics.slice(0, 5).map((m) => m.reward.mean));
    const last = mean(metrics.slice(-5).map((m) => m.reward.mean));
    expect(first).toBeLessThan(0.3);
    expect(last).toBeGreaterThan(first + 0.4);
    for (const m of metrics) {
      expect(m.staleness).toBe(0);
      expect(m.rollouts).toBe(16);
      expect(m.tokensSampled).toBe(64);
      if (!m.skipped) {
        expect(m.tokensTrained).toBe(64 - m.groupsDropped * 32);
        expect(Number.isFinite(m.loss) && m.gradNorm > 0).toBe(true);
      }
    }
    // On-policy: the first micro-batch sees exactly the sampling weights, so nothing is clipped.
    expect(metrics[0]!.clipFraction).toBe(0);
    expect(metrics[0]!.entropy).toBeGreaterThan(1);
  });

  test('max-async 1: rollouts are sampled one step ahead and report staleness 1', async () => {
    const backend = await createCpuBackend(CONFIG, { seed: 4 });
    const trainer = new GrpoTrainer(makeEnv(), backend, new LetterPolicy(backend), { steps: 3, tasksPerStep: 1, groupSize: 4, maxTokens: 3, schedule: { lr: 1e-2 }, maxAsync: 1 });
    const metrics = await trainer.run();
    expect(metrics.map((m) => m.staleness)).toEqual([0, 1, 1]);
  });

  test('a step where every rollout fails stops the run with the first error', async () => {
    const backend = await createCpuBackend(CONFIG, { seed: 5 });
    const failing: SamplingPolicy = { policyVersion: 0, syncWeights: async () => {}, chat: { completions: { create: async () => { throw new Error('GPU device lost'); } } } };
    const trainer = new GrpoTrainer(makeEnv(), backend, failing, { steps: 2, tasksPerStep: 1, groupSize: 2 });
    await expect(trainer.run()).rejects.toThrow(TrainingError);
    await expect(new GrpoTrainer(makeEnv(), backend, failing, { steps: 1, tasksPerStep: 1, groupSize: 2 }).run()).rejects.toThrow('GPU device lost');
  });

  test('groups with equal rewards are dropped and such a step skips the update', async () => {
    const backend = await createCpuBackend(CONFIG, { seed: 6 });
    const constantEnv = new SingleTurnEnv({ name: 'flat', dataset: [{ question: 'ab' }], rubric: new Rubric({ rewards: [{ fn: () => 1, name: 'constantReward' }] }) });
    const before = await backend.getParameters();
    const [metrics] = await new GrpoTrainer(constantEnv, backend, new LetterPolicy(backend), { steps: 1, tasksPerStep: 1, groupSize: 4, maxTokens: 2 }).run();
    expect(metrics!.groupsDropped).toBe(1);
    expect(metrics!.skipped).toContain('equal rewards');
    const after = await backend.getParameters();
    expect(after.get('lm_head.weight')!.data).toEqual(before.get('lm_head.weight')!.data);
  });
});

function mean(values: number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length;
}
