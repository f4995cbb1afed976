/**
 * Causal grouped-query self-attention, softmax scaled by 1/√HS: query head h reads key/value head
 * floor(h / (NH/KVH)), as in Hugging Face `repeat_kv`. Q, K, V arrive already projected (and rotated);
 * the output is (B, T, NH, HS), i.e. the heads concatenated, ready for o_proj.
 * CPU reference of `attention_forward.wgsl` / `attention_backward.wgsl`, after llm.c's attention.
 * It deliberately has no padding mask: sequences are right-padded, so causality alone keeps padding
 * away from real tokens, and padded positions are masked out of the loss instead.
 */

/** Computes out = softmax(q·kᵀ/√HS, causal)·v per head and saves the probabilities in att (zero above the diagonal). */
export function attentionForward(
  out: Float32Array, // (B, T, NH, HS)
  att: Float32Array, // (B, NH, T, T)
  q: Float32Array, // (B, T, NH, HS)
  k: Float32Array, // (B, T, KVH, HS)
  v: Float32Array, // (B, T, KVH, HS)
  B: number,
  T: number,
  NH: number,
  KVH: number,
  HS: number,
): void {
  const scale = 1 / Math.sqrt(HS);
  const groupSize = NH / KVH;
  const scores = new Float64Array(T); // (T) one row of scores, then of exponentials
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < NH; h++) {
      const kvh = Math.floor(h / groupSize);
      for (let t = 0; t < T; t++) {
        const qBase = ((b * T + t) * NH + h) * HS;
        const attRow = ((b * NH + h) * T + t) * T;
        // scores and their max, for a stable softmax
        let maxScore = -Infinity;
        for (let t2 = 0; t2 <= t; t2++) {
          const kBase = ((b * T + t2) * KVH + kvh) * HS;
          let dot = 0;
          for (let i = 0; i < HS; i++) dot += q[qBase + i]! * k[kBase + i]!;
          scores[t2] = dot * scale;
          if (scores[t2]! > maxScore) maxScore = scores[t2]!;
        }
        let sumExp = 0;
        for (let t2 = 0; t2 <= t; t2++) {
          scores[t2] = Math.exp(scores[t2]! - maxScore);
          sumExp += scores[t2]!;
        }
        for (let t2 = 0; t2 < T; t2++) att[attRow + t2] = t2 <= t ? scores[t2]! / sumExp : 0;
        // weighted sum of the values
        for (let i = 0; i < HS; i++) {
          let sum = 0;
          for (let t2 = 0; t2 <= t; t2++) sum += att[attRow + t2]! * v[((b * T + t2) * KVH + kvh) * HS + i]!;
          out[qBase + i] = sum;
        }
      }
    }
  }
}

/** Accumulates the gradients of attentionForward into dq, dk and dv, from dout and the saved probabilities. */
export function attentionBackward(
  dq: Float32Array, // (B, T, NH, HS)
  dk: Float32Array, // (B, T, KVH, HS)
  dv: Float32Array, // (B, T, KVH, HS)
  dout: Float32Array, // (B, T, NH, HS)
  q: Float32Array, // (B, T, NH, HS)
  k: Float32Array, // (B, T, KVH, HS)
  v: Float32Array, // (B, T, KVH, HS)
  att: Float32Array, // (B, NH, T, T)
  B: number,
  T: number,
  NH: number,
  KVH: number,
  HS: number,
): void {
  const scale = 1 / Math.sqrt(HS);
  const groupSize = NH / KVH;
  const datt = new Float64Array(T); // (T) gradient of one row of probabilities
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < NH; h++) {
      const kvh = Math.floor(h / groupSize);
      for (let t = 0; t < T; t++) {
        const qBase = ((b * T + t) * NH + h) * HS;
        const attRow = ((b * NH + h) * T + t) * T;
        // through the weighted sum: datt = dout·v, dv += att·dout
        let dotAttDatt = 0;
        for (let t2 = 0; t2 <= t; t2++) {
          const vBase = ((b * T + t2) * KVH + kvh) * HS;
          const p = att[attRow + t2]!;
          let dot = 0;
          for (let i = 0; i < HS; i++) {
            dot += dout[qBase + i]! * v[vBase + i]!;
            dv[vBase + i]! += p * dout[qBase + i]!;
          }
          datt[t2] = dot;
          dotAttDatt += p * dot;
        }
        // through the softmax: dscore = att·(datt − Σ att·datt), then through the scaled dot product
        for (let t2 = 0; t2 <= t; t2++) {
          const kBase = ((b * T + t2) * KVH + kvh) * HS;
          const dscore = att[attRow + t2]! * (datt[t2]! - dotAttDatt) * scale;
          for (let i = 0; i < HS; i++) {
            dq[qBase + i]! += dscore * k[kBase + i]!;
            dk[kBase + i]! += dscore * q[qBase + i]!;
          }
        }
      }
    }
  }
}
