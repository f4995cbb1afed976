/**
 * The training-step peer of bench:train and bench:gpu: the same Llama-family model (tied embeddings,
 * no biases, no LoRA) written with jax-js — RMSNorm, rotate-half RoPE, grouped-query causal attention
 * (written out: q·kᵀ, mask, softmax, ·v), SwiGLU — and one training step as our backend's zeroGrad + backward + step:
 * the gradient of Σ w·log p(target) (jax-js `valueAndGrad`), global-norm clipping and AdamW in the
 * optax / torch.optim.AdamW form, the whole step under `jit`. It starts from our backend's parameters,
 * so both models compute the same objective (checked). No Node APIs: it runs in Node (Dawn) and in
 * a page. Not a test.
 */
import { blockUntilReady, jit, nn, numpy as np, valueAndGrad, type Array as JaxArray } from '@jax-js/jax';
import type { NamedTensors, OptimizerStepOptions } from '../src/gpu/model/backend.ts';
import type { ModelConfig } from '../src/gpu/model/config.ts';

/** A parameter tree: HF name → array. */
type Params = Record<string, JaxArray>;

/** One jax-js training step per call, on parameters copied from a NamedTensors snapshot. */
export interface JaxTrainer {
  /** Runs forward + backward + clip + AdamW on (B, T) ids; resolves with the objective Σ w·logp once the step's arrays are ready. */
  step(ids: Int32Array, targets: Int32Array, weights: Float32Array): Promise<number>;
  dispose(): void;
}

/** Builds the jax-js model and its jitted training step for `config` (must be tied, bias-free, without qk-norm) at batch shape (B, T). */
export function createJaxTrainer(config: ModelConfig, tensors: NamedTensors, B: number, T: number, optimizer: OptimizerStepOptions): JaxTrainer {
  if (!config.tie_word_embeddings || config.attention_bias || config.attention_output_bias || config.qk_norm) {
    throw new Error('the jax-js peer models tied embeddings without biases or qk-norm only');
  }
  const { vocab_size: V, hidden_size: C, num_attention_heads: NH, num_key_value_heads: KVH, num_hidden_layers: L, rms_norm_eps: eps, rope_theta: theta } = config;
  const HS = config.head_dim ?? C / NH;
  const half = HS / 2;

  // RoPE as out = x·cos + (x·R)·sin, with R the rotate-half matrix: (x·R)[i] = -x[i + half], (x·R)[i + half] = x[i]
  const rotation = new Float32Array(HS * HS);
  for (let i = 0; i < half; i++) {
    rotation[(i + half) * HS + i] = -1;
    rotation[i * HS + i + half] = 1;
  }
  const cos = new Float32Array(T * HS);
  const sin = new Float32Array(T * HS);
  for (let t = 0; t < T; t++) {
    for (let i = 0; i < half; i++) {
      const angle = t * Math.pow(theta, (-2 * i) / HS);
      cos[t * HS + i] = cos[t * HS + i + half] = Math.cos(angle);
      sin[t * HS + i] = sin[t * HS + i + half] = Math.sin(angle);
    }
  }
  const mask = new Float32Array(T * T);
  for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) mask[i * T + j] = -1e9;
  const constants = {
    rotation: np.array(rotation, { shape: [HS, HS] }),
    cos: np.array(cos, { shape: [1, T, 1, HS] }),
    sin: np.array(sin, { shape: [1, T, 1, HS] }),
    mask: np.array(mask, { shape: [1, 1, T, T] }),
  };

  const rmsnorm = (x: JaxArray, weight: JaxArray): JaxArray => {
    const meanSquare = np.mean(np.square(x.ref), -1, { keepdims: true });
    return np.multiply(np.multiply(x, np.reciprocal(np.sqrt(np.add(meanSquare, eps)))), weight);
  };
  const linear = (x: JaxArray, weight: JaxArray): JaxArray => np.matmul(x, np.transpose(weight));
  const rope = (x: JaxArray, heads: number, rotationM: JaxArray, cosM: JaxArray, sinM: JaxArray): JaxArray => {
    const shaped = np.reshape(x, [B, T, heads, HS]);
    const rotated = np.matmul(shaped.ref, rotationM);
    return np.add(np.multiply(shaped, cosM), np.multiply(rotated, sinM));
  };

  // causal attention with grouped KV heads, written out (nn.dotProductAttention needs einsum, which
  // needs iterator helpers that Node 20 lacks): softmax(q·kᵀ/√HS + mask)·v per (batch, head)
  const attention = (q: JaxArray, k: JaxArray, v: JaxArray, maskM: JaxArray): JaxArray => {
    const group = NH / KVH;
    const qh = np.transpose(q, [0, 2, 1, 3]); // (B, NH, T, HS)
    const kh = np.transpose(np.repeat(k, group, 2), [0, 2, 3, 1]); // (B, NH, HS, T)
    const vh = np.transpose(np.repeat(v, group, 2), [0, 2, 1, 3]); // (B, NH, T, HS)
    const scores = np.add(np.multiply(np.matmul(qh, kh), 1 / Math.sqrt(HS)), maskM);
    return np.transpose(np.matmul(nn.softmax(scores, -1), vh), [0, 2, 1, 3]); // (B, T, NH, HS)
  };

  /** Σ w·log softmax(logits)[target] for ids, targets (one-hot, (N, V)) and weights (N). */
  const objective = (params: Params, idsOneHot: JaxArray, targetsOneHot: JaxArray, weights: JaxArray, rotationM: JaxArray, cosM: JaxArray, sinM: JaxArray, maskM: JaxArray): JaxArray => {
    const wte = params['model.embed_tokens.weight']!;
    let x = np.matmul(idsOneHot, wte.ref); // (N, C)
    for (let layer = 0; layer < L; layer++) {
      const p = (name: string): JaxArray => params[`model.layers.${layer}.${name}`]!;
      const h = rmsnorm(x.ref, p('input_layernorm.weight'));
      const q = rope(linear(h.ref, p('self_attn.q_proj.weight')), NH, rotationM.ref, cosM.ref, sinM.ref);
      const k = rope(linear(h.ref, p('self_attn.k_proj.weight')), KVH, rotationM.ref, cosM.ref, sinM.ref);
      const v = np.reshape(linear(h, p('self_attn.v_proj.weight')), [B, T, KVH, HS]);
      const attended = np.reshape(attention(q, k, v, maskM.ref), [B * T, NH * HS]);
      x = np.add(x, linear(attended, p('self_attn.o_proj.weight')));
      const h2 = rmsnorm(x.ref, p('post_attention_layernorm.weight'));
      const gated = np.multiply(nn.silu(linear(h2.ref, p('mlp.gate_proj.weight'))), linear(h2, p('mlp.up_proj.weight')));
      x = np.add(x, linear(gated, p('mlp.down_proj.weight')));
    }
    rotationM.dispose();
    cosM.dispose();
    sinM.dispose();
    maskM.dispose();
    const logits = linear(rmsnorm(x, params['model.norm.weight']!), wte); // (N, V)
    const logp = np.sum(np.multiply(nn.logSoftmax(logits, -1), targetsOneHot), -1); // (N)
    return np.sum(np.multiply(logp, weights));
  };

  const names = [...tensors.keys()].filter((name) => name !== 'lm_head.weight').sort();
  const params: Params = {};
  const m: Params = {};
  const v: Params = {};
  for (const name of names) {
    const tensor = tensors.get(name)!;
    params[name] = np.array(tensor.data, { shape: tensor.shape });
    m[name] = np.zeros(tensor.shape);
    v[name] = np.zeros(tensor.shape);
  }
  const { lr, beta1, beta2, eps: adamEps, weightDecay, maxGradNorm } = optimizer;
  const gradientOf = valueAndGrad(objective);

  /** One step: value and gradient, global-norm clip, AdamW (bias-corrected, decoupled weight decay); returns the new state and the objective. */
  const trainStep = jit((state: { params: Params; m: Params; v: Params }, idsOneHot: JaxArray, targetsOneHot: JaxArray, weights: JaxArray, rotationM: JaxArray, cosM: JaxArray, sinM: JaxArray, maskM: JaxArray, step: JaxArray) => {
    const paramsRef = Object.fromEntries(names.map((name) => [name, state.params[name]!.ref])) as Params; // the update reads them again
    const [value, grads] = gradientOf(paramsRef, idsOneHot, targetsOneHot, weights, rotationM, cosM, sinM, maskM) as unknown as [JaxArray, Params];
    let squares: JaxArray = np.zeros([]);
    for (const name of names) squares = np.add(squares, np.sum(np.square(grads[name]!.ref)));
    const norm = np.sqrt(squares);
    const clip = maxGradNorm > 0 ? np.minimum(np.divide(maxGradNorm, np.add(norm, 1e-6)), 1) : np.ones([]);
    const correction1 = np.subtract(1, np.power(beta1, step.ref));
    const correction2 = np.subtract(1, np.power(beta2, step));
    const next = { params: {} as Params, m: {} as Params, v: {} as Params };
    for (const name of names) {
      const g = np.multiply(grads[name]!, clip.ref);
      const m1 = np.add(np.multiply(state.m[name]!, beta1), np.multiply(g.ref, 1 - beta1));
      const v1 = np.add(np.multiply(state.v[name]!, beta2), np.multiply(np.square(g), 1 - beta2));
      const mHat = np.divide(m1.ref, correction1.ref);
      const vHat = np.divide(v1.ref, correction2.ref);
      const p0 = state.params[name]!;
      const decayed = np.multiply(p0, 1 - lr * weightDecay);
      next.params[name] = np.subtract(decayed, np.multiply(np.divide(mHat, np.add(np.sqrt(vHat), adamEps)), lr));
      next.m[name] = m1;
      next.v[name] = v1;
    }
    clip.dispose();
    correction1.dispose();
    correction2.dispose();
    return { state: next, value };
  });

  let state = { params, m, v };
  let stepCount = 0;
  return {
    async step(ids, targets, weights) {
      stepCount++;
      const idsOneHot = nn.oneHot(np.array(ids, { shape: [B * T], dtype: np.int32 }), V);
      const targetsOneHot = nn.oneHot(np.array(targets, { shape: [B * T], dtype: np.int32 }), V);
      const out = trainStep(state, idsOneHot, targetsOneHot, np.array(weights, { shape: [B * T] }), constants.rotation.ref, constants.cos.ref, constants.sin.ref, constants.mask.ref, np.array([stepCount], { shape: [] })) as unknown as {
        state: typeof state;
        value: JaxArray;
      };
      state = out.state;
      await blockUntilReady([...Object.values(state.params), ...Object.values(state.m), ...Object.values(state.v)]);
      const value = (await out.value.data()) as Float32Array;
      return value[0]!;
    },
    dispose() {
      trainStep.dispose();
      for (const tree of [state.params, state.m, state.v]) for (const name of names) tree[name]!.dispose();
      constants.rotation.dispose();
      constants.cos.dispose();
      constants.sin.dispose();
      constants.mask.dispose();
    },
  };
}
