/**
 * A tiny learnable task for trainer tests: prompts and replies are letters a..p (token ids 0..15),
 * and the reward is the share of emitted letters that are "d". `LetterPolicy` samples letters from
 * a ModelBackend's current weights with a full forward per token (no KV cache, no tokenizer), so
 * the trainer is tested on its own on either backend.
 */
import { Rubric, SingleTurnEnv, type ChatClient, type ChatRequest, type RewardContext } from '../../src/envs/index.ts';
import { createRng } from '../../src/envs/builtin/random.ts';
import type { ModelBackend } from '../../src/gpu/model/backend.ts';
import type { ModelConfig } from '../../src/gpu/model/config.ts';
import type { SamplingPolicy } from '../../src/rl/grpo-trainer.ts';

/** Vocabulary of the letter task: a..p. */
export const LETTER_VOCAB = 16;

/** A 1-layer model over the letter vocabulary (sizes multiples of 4, as the WebGPU backend wants). */
export const LETTER_MODEL: ModelConfig = {
  architecture: 'LlamaForCausalLM', vocab_size: LETTER_VOCAB, hidden_size: 32, intermediate_size: 64, num_hidden_layers: 1,
  num_attention_heads: 4, num_key_value_heads: 2, head_dim: 8, rope_theta: 10000, rms_norm_eps: 1e-5,
  tie_word_embeddings: false, attention_bias: false, attention_output_bias: false, qk_norm: false,
};

const toIds = (text: string) => [...text].map((c) => c.charCodeAt(0) - 97);
const toText = (ids: number[]) => ids.map((id) => String.fromCharCode(97 + id)).join('');

/** Reward: the share of emitted letters that are "d". */
export const letterDReward = (ctx: RewardContext) => [...ctx.completion[0]!.content].filter((c) => c === 'd').length / ctx.completion[0]!.content.length;

/** The "say d" environment: four two-letter prompts. */
export const makeLetterEnv = () => new SingleTurnEnv({ name: 'say-d', dataset: ['ab', 'ba', 'cc', 'ac'].map((question) => ({ question })), rubric: new Rubric({ funcs: [letterDReward] }) });

/** Samples `max_tokens` letters after the prompt's letters from the backend's current weights. */
export class LetterPolicy implements SamplingPolicy {
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
          const last = Array.from(logits.subarray((ids.length - 1) * LETTER_VOCAB, ids.length * LETTER_VOCAB), (x) => x / temperature);
          const max = Math.max(...last);
          const logZ = max + Math.log(last.reduce((s, x) => s + Math.exp(x - max), 0));
          let u = rng.next();
          let id = LETTER_VOCAB - 1;
          for (let v = 0; v < LETTER_VOCAB; v++) {
            u -= Math.exp(last[v]! - logZ);
            if (u <= 0) {
              id = v;
              break;
            }
          }
          ids.push(id);
          completionIds.push(id);
          completionLogprobs.push(last[id]! - logZ);
        }
        return {
          id: 'letters',
          model: 'letters',
          choices: [{ index: 0, message: { role: 'assistant' as const, content: toText(completionIds) }, finish_reason: 'length' as const, tokens: { promptIds, completionIds, completionLogprobs } }],
        };
      },
    },
  };
}
