/**
 * config.json parsing (real Llama/Qwen2/Qwen3 configs and the errors for unsupported ones) and the
 * pure layout tables: Hugging Face names, aligned offsets, and parameter counts of real models.
 */
import { describe, expect, it } from 'vitest';
import { modelConfigToJson, parseModelConfig } from '../../../src/gpu/model/config.ts';
import { activationLayout, loraLayout, paramLayout } from '../../../src/gpu/model/layout.ts';

const SMOLLM2_135M = {
  architectures: ['LlamaForCausalLM'], model_type: 'llama', vocab_size: 49152, hidden_size: 576, intermediate_size: 1536,
  num_hidden_layers: 30, num_attention_heads: 9, num_key_value_heads: 3, hidden_act: 'silu', rope_theta: 100000,
  rms_norm_eps: 1e-5, tie_word_embeddings: true, attention_bias: false, mlp_bias: false, rope_scaling: null,
};
const QWEN25_05B = {
  architectures: ['Qwen2ForCausalLM'], model_type: 'qwen2', vocab_size: 151936, hidden_size: 896, intermediate_size: 4864,
  num_hidden_layers: 24, num_attention_heads: 14, num_key_value_heads: 2, hidden_act: 'silu', rope_theta: 1000000,
  rms_norm_eps: 1e-6, tie_word_embeddings: true, use_sliding_window: false, sliding_window: 32768,
};
const QWEN3_06B = {
  architectures: ['Qwen3ForCausalLM'], model_type: 'qwen3', vocab_size: 151936, hidden_size: 1024, intermediate_size: 3072,
  num_hidden_layers: 28, num_attention_heads: 16, num_key_value_heads: 8, head_dim: 128, hidden_act: 'silu',
  rope_theta: 1000000, rms_norm_eps: 1e-6, tie_word_embeddings: true, attention_bias: false, rope_scaling: null,
};

describe('parseModelConfig', () => {
  it('reads Llama, Qwen2 and Qwen3 configs and resolves head_dim, biases and q/k norm', () => {
    const smol = parseModelConfig(SMOLLM2_135M);
    expect(smol).toMatchObject({ head_dim: 64, attention_bias: false, attention_output_bias: false, qk_norm: false, tie_word_embeddings: true });
    const qwen2 = parseModelConfig(QWEN25_05B);
    expect(qwen2).toMatchObject({ head_dim: 64, attention_bias: true, attention_output_bias: false, qk_norm: false });
    const qwen3 = parseModelConfig(QWEN3_06B);
    expect(qwen3).toMatchObject({ head_dim: 128, attention_bias: false, qk_norm: true });
    for (const config of [smol, qwen2, qwen3]) expect(parseModelConfig(modelConfigToJson(config))).toEqual(config);
  });

  it('rejects what it would run wrongly, naming the file and the field', () => {
    expect(() => parseModelConfig({ ...SMOLLM2_135M, architectures: ['GPT2LMHeadModel'] }, 'x/config.json')).toThrow(
      /x\/config\.json: unsupported architecture "GPT2LMHeadModel"; supported: LlamaForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM/,
    );
    expect(() => parseModelConfig({ ...SMOLLM2_135M, rope_scaling: { rope_type: 'llama3', factor: 8 } })).toThrow(/rope_scaling .* is not supported/);
    expect(() => parseModelConfig({ ...SMOLLM2_135M, hidden_act: 'gelu' })).toThrow(/hidden_act "gelu" is not supported/);
    expect(() => parseModelConfig({ ...SMOLLM2_135M, num_key_value_heads: 4 })).toThrow(/multiple of num_key_value_heads/);
    expect(() => parseModelConfig({ ...SMOLLM2_135M, vocab_size: undefined })).toThrow(/field "vocab_size" must be a positive integer, got null/);
    expect(() => parseModelConfig({ ...QWEN25_05B, use_sliding_window: true })).toThrow(/use_sliding_window/);
    expect(() => parseModelConfig([])).toThrow(/expected a JSON object/);
  });
});

describe('paramLayout', () => {
  it('counts the parameters of real checkpoints exactly', () => {
    expect(paramLayout(parseModelConfig(SMOLLM2_135M)).totalSize).toBe(134_515_008);
    expect(paramLayout(parseModelConfig(QWEN25_05B)).totalSize).toBe(494_032_768);
    expect(paramLayout(parseModelConfig(QWEN3_06B)).totalSize).toBe(596_049_920);
  });

  it('uses Hugging Face names and shapes, with offsets padded to the alignment', () => {
    const config = parseModelConfig({ ...QWEN3_06B, num_hidden_layers: 1, vocab_size: 10, tie_word_embeddings: false });
    const layout = paramLayout(config, { alignment: 64 });
    expect(layout.slots.map((slot) => slot.name)).toEqual([
      'model.embed_tokens.weight',
      'model.layers.0.input_layernorm.weight',
      'model.layers.0.self_attn.q_proj.weight',
      'model.layers.0.self_attn.k_proj.weight',
      'model.layers.0.self_attn.v_proj.weight',
      'model.layers.0.self_attn.o_proj.weight',
      'model.layers.0.self_attn.q_norm.weight',
      'model.layers.0.self_attn.k_norm.weight',
      'model.layers.0.post_attention_layernorm.weight',
      'model.layers.0.mlp.gate_proj.weight',
      'model.layers.0.mlp.up_proj.weight',
      'model.layers.0.mlp.down_proj.weight',
      'model.norm.weight',
      'lm_head.weight',
    ]);
    expect(layout.byName.get('model.layers.0.self_attn.q_proj.weight')!.shape).toEqual([2048, 1024]);
    expect(layout.byName.get('model.layers.0.self_attn.o_proj.weight')!.shape).toEqual([1024, 2048]);
    let end = 0;
    for (const slot of layout.slots) {
      expect(slot.offset % 64).toBe(0);
      expect(slot.offset).toBeGreaterThanOrEqual(end);
      end = slot.offset + slot.size;
    }
    expect(layout.totalSize % 64).toBe(0);
    expect(layout.totalSize).toBeGreaterThanOrEqual(end);
  });

  it('lays out LoRA adapters under PEFT names and activations per (B, T)', () => {
    const config = parseModelConfig({ ...SMOLLM2_135M, num_hidden_layers: 2 });
    const lora = loraLayout(config, { rank: 8, alpha: 16, targetModules: ['q_proj', 'down_proj'] });
    expect(lora.slots.map((slot) => `${slot.name} [${slot.shape}]`)).toEqual([
      'base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight [8,576]',
      'base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight [576,8]',
      'base_model.model.model.layers.0.mlp.down_proj.lora_A.weight [8,1536]',
      'base_model.model.model.layers.0.mlp.down_proj.lora_B.weight [576,8]',
      'base_model.model.model.layers.1.self_attn.q_proj.lora_A.weight [8,576]',
      'base_model.model.model.layers.1.self_attn.q_proj.lora_B.weight [576,8]',
      'base_model.model.model.layers.1.mlp.down_proj.lora_A.weight [8,1536]',
      'base_model.model.model.layers.1.mlp.down_proj.lora_B.weight [576,8]',
    ]);
    const acts = activationLayout(config, 2, 5, null, { alignment: 4 });
    expect(acts.byName.get('layers.1.att')!.shape).toEqual([2, 9, 5, 5]);
    expect(acts.byName.get('logits')!.shape).toEqual([10, 49152]);
    expect(acts.slots.every((slot) => slot.offset % 4 === 0)).toBe(true);
    const withoutLogits = activationLayout(config, 2, 5, null, { alignment: 4, logits: false });
    expect(withoutLogits.byName.has('logits')).toBe(false);
    expect(withoutLogits.byName.get('logprobs')!.shape).toEqual([10]);
    expect(acts.totalSize - withoutLogits.totalSize).toBe(10 * 49152);
  });
});
