/**
 * Rotary position embedding with its cosines and sines computed once per (HS, theta) and position
 * instead of per token: the same angles, in float64, and the same arithmetic as
 * src/gpu/reference/rope.ts (so the same results, value for value), without three transcendental
 * calls per token and frequency.
 */

/** cos and sin of position·theta^(-2i/HS) for positions [0, positions) and i < HS/2, row-major (position, i). */
interface RopeTable {
  HS: number;
  theta: number;
  positions: number;
  cos: Float64Array;
  sin: Float64Array;
}

/** Returns ropeForward and ropeBackward (the references' signatures) over a table they keep. */
export function createTableRope(): {
  ropeForward(out: Float32Array, inp: Float32Array, positions: Int32Array, B: number, T: number, NH: number, HS: number, theta: number): void;
  ropeBackward(dinp: Float32Array, dout: Float32Array, positions: Int32Array, B: number, T: number, NH: number, HS: number, theta: number): void;
} {
  let table: RopeTable | null = null;

  /** The table for (HS, theta) covering every position in `positions`, rebuilt when it does not. */
  const tableFor = (positions: Int32Array, count: number, HS: number, theta: number): RopeTable => {
    let maxPosition = 0;
    for (let i = 0; i < count; i++) {
      if (positions[i]! < 0) throw new Error(`rope: position ${positions[i]} is negative`);
      maxPosition = Math.max(maxPosition, positions[i]!);
    }
    if (table !== null && table.HS === HS && table.theta === theta && table.positions > maxPosition) return table;
    const half = HS / 2;
    const size = Math.max(maxPosition + 1, 2 * (table?.positions ?? 0));
    const cos = new Float64Array(size * half);
    const sin = new Float64Array(size * half);
    for (let p = 0; p < size; p++) {
      for (let i = 0; i < half; i++) {
        const angle = p * Math.pow(theta, (-2 * i) / HS);
        cos[p * half + i] = Math.cos(angle);
        sin[p * half + i] = Math.sin(angle);
      }
    }
    table = { HS, theta, positions: size, cos, sin };
    return table;
  };

  return {
    ropeForward(out, inp, positions, B, T, NH, HS, theta) {
      const { cos, sin } = tableFor(positions, B * T, HS, theta);
      const half = HS / 2;
      for (let bt = 0; bt < B * T; bt++) {
        const row = positions[bt]! * half;
        for (let h = 0; h < NH; h++) {
          const base = (bt * NH + h) * HS;
          for (let i = 0; i < half; i++) {
            const c = cos[row + i]!;
            const s = sin[row + i]!;
            const x1 = inp[base + i]!;
            const x2 = inp[base + i + half]!;
            out[base + i] = x1 * c - x2 * s;
            out[base + i + half] = x2 * c + x1 * s;
          }
        }
      }
    },
    ropeBackward(dinp, dout, positions, B, T, NH, HS, theta) {
      const { cos, sin } = tableFor(positions, B * T, HS, theta);
      const half = HS / 2;
      for (let bt = 0; bt < B * T; bt++) {
        const row = positions[bt]! * half;
        for (let h = 0; h < NH; h++) {
          const base = (bt * NH + h) * HS;
          for (let i = 0; i < half; i++) {
            const c = cos[row + i]!;
            const s = sin[row + i]!;
            const g1 = dout[base + i]!;
            const g2 = dout[base + i + half]!;
            dinp[base + i]! += g1 * c + g2 * s;
            dinp[base + i + half]! += g2 * c - g1 * s;
          }
        }
      }
    },
  };
}
