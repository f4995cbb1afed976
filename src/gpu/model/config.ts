/**
 * The model configuration: the Hugging Face `config.json` fields of LlamaForCausalLM,
 * Qwen2ForCausalLM (QKV bias) and Qwen3ForCausalLM (per-head q/k RMSNorm), and a parser that
 * rejects, with a clear reason, every checkpoint this engine would run wrongly (rope scaling,
 * sliding windows, other activations, other architectures). It is not a general HF config reader.
 */

/** Architectures the engine runs, by their Hugging Face `architectures[0]` name. */
const SUPPORTED_ARCHITECTURES = ['LlamaForCausalLM', 'Qwen2ForCausalLM', 'Qwen3ForCausalLM'] as const;

/** One of SUPPORTED_ARCHITECTURES. */
export type Architecture = (typeof SUPPORTED_ARCHITECTURES)[number];

/** A Llama-family decoder, field names as in Hugging Face config.json (head_dim always resolved). */
export interface ModelConfig {
  architecture: Architecture;
  vocab_size: number; // V
  hidden_size: number; // C
  intermediate_size: number; // I, the MLP width
  num_hidden_layers: number; // L
  num_attention_heads: number; // NH
  num_key_value_heads: number; // KVH, divides NH
  head_dim: number; // HS; Qwen3 may have NH*HS ≠ C
  rope_theta: number;
  rms_norm_eps: number;
  tie_word_embeddings: boolean; // lm_head shares model.embed_tokens.weight
  attention_bias: boolean; // q_proj, k_proj and v_proj have a bias (always in Qwen2)
  attention_output_bias: boolean; // o_proj has a bias (Llama and Qwen3 when attention_bias; never Qwen2)
  qk_norm: boolean; // per-head RMSNorm of q and k before RoPE (Qwen3)
}

/** Returns a ModelConfig from a parsed config.json, or throws naming the file, the field and what is wrong. */
export function parseModelConfig(json: unknown, source = 'config.json'): ModelConfig {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new Error(`${source}: expected a JSON object`);
  const raw = json as Record<string, unknown>;
  const architectures = raw.architectures;
  const architecture = Array.isArray(architectures) ? architectures[0] : raw.model_type === 'llama' ? 'LlamaForCausalLM' : undefined;
  if (typeof architecture !== 'string' || !(SUPPORTED_ARCHITECTURES as readonly string[]).includes(architecture)) {
    throw new Error(`${source}: unsupported architecture ${JSON.stringify(architecture ?? raw.model_type ?? null)}; ` + `supported: ${SUPPORTED_ARCHITECTURES.join(', ')}`);
  }
  const integer = (field: string, fallback?: number): number => {
    const value = raw[field] ?? fallback;
    if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) {
      throw new Error(`${source}: field "${field}" must be a positive integer, got ${JSON.stringify(value ?? null)}`);
    }
    return value;
  };
  const positive = (field: string, fallback: number): number => {
    const value = raw[field] ?? fallback;
    if (typeof value !== 'number' || !(value > 0)) throw new Error(`${source}: field "${field}" must be a positive number, got ${JSON.stringify(value)}`);
    return value;
  };
  const hiddenSize = integer('hidden_size');
  const heads = integer('num_attention_heads');
  const kvHeads = integer('num_key_value_heads', heads);
  const headDim = raw.head_dim === null || raw.head_dim === undefined ? hiddenSize / heads : raw.head_dim;
  if (typeof headDim !== 'number' || !Number.isInteger(headDim) || headDim <= 0 || headDim % 2 !== 0) {
    throw new Error(`${source}: head_dim must be a positive even integer (hidden_size / num_attention_heads when absent), got ${headDim}`);
  }
  if (heads % kvHeads !== 0) throw new Error(`${source}: num_attention_heads (${heads}) must be a multiple of num_key_value_heads (${kvHeads})`);
  const activation = raw.hidden_act ?? 'silu';
  if (activation !== 'silu') throw new Error(`${source}: hidden_act ${JSON.stringify(activation)} is not supported (only "silu")`);
  if (raw.rope_scaling !== undefined && raw.rope_scaling !== null) {
    throw new Error(`${source}: rope_scaling ${JSON.stringify(raw.rope_scaling)} is not supported (only plain RoPE)`);
  }
  if (raw.mlp_bias === true) throw new Error(`${source}: mlp_bias true is not supported`);
  if (raw.use_sliding_window === true) throw new Error(`${source}: use_sliding_window true is not supported`);
  const attentionBias = raw.attention_bias === true;
  return {
    architecture: architecture as Architecture,
    vocab_size: integer('vocab_size'),
    hidden_size: hiddenSize,
    intermediate_size: integer('intermediate_size'),
    num_hidden_layers: integer('num_hidden_layers'),
    num_attention_heads: heads,
    num_key_value_heads: kvHeads,
    head_dim: headDim,
    rope_theta: positive('rope_theta', 10000),
    rms_norm_eps: positive('rms_norm_eps', 1e-6),
    tie_word_embeddings: raw.tie_word_embeddings === true, // false by default in all three HF config classes
    attention_bias: architecture === 'Qwen2ForCausalLM' ? true : attentionBias,
    attention_output_bias: architecture === 'Qwen2ForCausalLM' ? false : attentionBias,
    qk_norm: architecture === 'Qwen3ForCausalLM',
  };
}

/** Returns the config.json object Hugging Face would write for this config (parseModelConfig reads it back unchanged). */
export function modelConfigToJson(config: ModelConfig): Record<string, unknown> {
  const json: Record<string, unknown> = {
    architectures: [config.architecture],
    model_type: { LlamaForCausalLM: 'llama', Qwen2ForCausalLM: 'qwen2', Qwen3ForCausalLM: 'qwen3' }[config.architecture],
    vocab_size: config.vocab_size,
    hidden_size: config.hidden_size,
    intermediate_size: config.intermediate_size,
    num_hidden_layers: config.num_hidden_layers,
    num_attention_heads: config.num_attention_heads,
    num_key_value_heads: config.num_key_value_heads,
    head_dim: config.head_dim,
    hidden_act: 'silu',
    rope_theta: config.rope_theta,
    rms_norm_eps: config.rms_norm_eps,
    tie_word_embeddings: config.tie_word_embeddings,
  };
  if (config.architecture !== 'Qwen2ForCausalLM') json.attention_bias = config.attention_bias;
  return json;
}
