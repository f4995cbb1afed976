/**
 * The GPU sampler's checks (sample_tokens.wgsl), written once and run on SwiftShader in Node + Dawn
 * (test/gpu-node/sampler.test.ts), on lavapipe (test/gpu-node/sampler-lavapipe.test.ts) and in
 * Chromium (sampler.test.ts): every mode against the CPU reference (src/gpu/reference/sample.ts),
 * the distribution of many draws against the CPU sampler's (two-sample chi-square), reproducibility
 * by uniform (hence by seed), and greedy ties.
 */
import { Rng, sampleToken, type SamplingParams } from '../../../src/gpu/inference/sampler.ts';
import { keptTokenIds, sampleTokens, type TokenDraw } from '../../../src/gpu/reference/sample.ts';
import { createTensor, type Kernels } from '../../../src/gpu/webgpu/kernels.ts';
import { SAMPLE_WORKGROUP_SIZES, sampleOnDevice } from '../../../src/gpu/webgpu/sampling.ts';
import { expectClose, seededUniform } from '../expect-close.ts';

/** One sampler check: a name for the test and a body that throws on mismatch. */
export interface SamplerCase {
  name: string;
  run: (kernels: Kernels) => Promise<void>;
}

// Log-probabilities and entropies are f32 reductions in a different order from the float64
// reference, and the kernel multiplies by 1/T where the reference divides: ~1e-6 apart measured.
const TOL = { atol: 2e-5, rtol: 1e-4 };

/** Rows of random logits of scale `scale`, with a few exact ties. */
function randomLogits(rows: number, V: number, seed: number, scale = 3): Float32Array {
  const uniform = seededUniform(seed);
  const logits = Float32Array.from({ length: rows * V }, () => scale * (uniform() - 0.5) * 2);
  for (let r = 0; r < rows; r++) {
    logits[r * V + 7] = logits[r * V + 3]!; // a tie
    logits[r * V + V - 2] = logits[r * V + 3]!;
  }
  return logits;
}

async function drawOnDevice(kernels: Kernels, logits: Float32Array, V: number, draws: readonly TokenDraw[], workgroupSize?: number) {
  const tensor = createTensor(kernels.device, logits, 'logits');
  try {
    return await sampleOnDevice(kernels, tensor, V, draws, workgroupSize);
  } finally {
    tensor.buffer.destroy();
  }
}

const MODES: Array<Omit<TokenDraw, 'row' | 'uniform' | 'drawable'>> = [
  { temperature: 0, topK: 0, topP: 1 },
  { temperature: 1, topK: 0, topP: 1 },
  { temperature: 0.7, topK: 0, topP: 1 },
  { temperature: 1, topK: 1, topP: 1 },
  { temperature: 1, topK: 5, topP: 1 },
  { temperature: 0.8, topK: 40, topP: 1 },
  { temperature: 1, topK: 0, topP: 0.9 },
  { temperature: 1.3, topK: 0, topP: 0.5 },
  { temperature: 1, topK: 50, topP: 0.8 },
  { temperature: 0.6, topK: 3, topP: 0.999 },
];

const referenceCase = (V: number, rows: number, workgroupSize: number): SamplerCase => ({
  name: `sample_tokens (${workgroupSize} threads per draw) matches its CPU reference: greedy, temperature, top-k, top-p, both, drawable < V (V = ${V}, ${rows} rows)`,
  run: async (kernels) => {
    const logits = randomLogits(rows, V, V);
    const uniform = seededUniform(V + 1);
    const draws: TokenDraw[] = [];
    for (const mode of MODES) {
      for (let i = 0; i < 6; i++) draws.push({ ...mode, row: (draws.length * 7) % rows, drawable: i % 2 === 0 ? V : V - 10, uniform: uniform() });
    }
    const got = await drawOnDevice(kernels, logits, V, draws, workgroupSize);
    const expected = sampleTokens(logits, V, draws);
    draws.forEach((draw, d) => {
      const want = expected[d]!;
      const id = got.ids[d]!;
      const label = `draw ${d} ${JSON.stringify(draw)}`;
      if (id < 0 || id >= draw.drawable) throw new Error(`${label}: drew ${id}, outside [0, ${draw.drawable})`);
      // f32 prefix sums may move a boundary by ~1e-6: only a uniform that close to one may pick the neighbour.
      const nearEdge = Math.min(Math.abs(draw.uniform - want.low), Math.abs(draw.uniform - want.high)) < 1e-5;
      if (id !== want.id && !nearEdge) throw new Error(`${label}: drew ${id}, the reference ${want.id} (uniforms [${want.low}, ${want.high}))`);
      const T = draw.temperature === 0 ? 1 : draw.temperature;
      const negLogSumExp = want.logprob - logits[draw.row * V + want.id]! / T;
      expectClose(got.logprobs[d]!, logits[draw.row * V + id]! / T + negLogSumExp, { ...TOL, label: `${label} logprob` });
      expectClose(got.entropies[d]!, want.entropy, { ...TOL, label: `${label} entropy` });
    });
  },
});

/** The upper 0.1% point of chi-square with df degrees of freedom (Wilson–Hilferty). */
function chiSquareCritical(df: number): number {
  const z = 3.09;
  const a = 2 / (9 * df);
  return df * (1 - a + z * Math.sqrt(a)) ** 3;
}

/** Two-sample chi-square of equal-sized samples over ids (bins with fewer than 10 draws in both merged); returns [statistic, degrees of freedom]. */
function twoSampleChiSquare(a: Int32Array | number[], b: number[], V: number): [number, number] {
  const countA = new Float64Array(V);
  const countB = new Float64Array(V);
  for (const id of a) countA[id]!++;
  for (const id of b) countB[id]!++;
  let statistic = 0;
  let bins = 0;
  let restA = 0;
  let restB = 0;
  for (let v = 0; v < V; v++) {
    if (countA[v]! + countB[v]! >= 10) {
      statistic += (countA[v]! - countB[v]!) ** 2 / (countA[v]! + countB[v]!);
      bins++;
    } else {
      restA += countA[v]!;
      restB += countB[v]!;
    }
  }
  if (restA + restB > 0) {
    statistic += (restA - restB) ** 2 / (restA + restB);
    bins++;
  }
  return [statistic, Math.max(1, bins - 1)];
}

const distributionCase: SamplerCase = {
  name: 'many draws on fixed logits follow the CPU sampler\'s distribution (two-sample chi-square, p > 0.001) and stay in its support',
  run: async (kernels) => {
    const V = 96;
    const drawable = 90;
    const logits = randomLogits(1, V, 5, 4);
    const draws = 3000;
    const settings: SamplingParams[] = [
      { temperature: 1 },
      { temperature: 0.7, topK: 12 },
      { temperature: 1.2, topP: 0.8 },
      { temperature: 1, topK: 30, topP: 0.9 },
    ];
    for (const params of settings) {
      const full: SamplingParams = { ...params, sampleableIds: drawable };
      const rng = new Rng(11);
      const deviceDraws: TokenDraw[] = Array.from({ length: draws }, () => ({ row: 0, temperature: params.temperature, topK: params.topK ?? 0, topP: params.topP ?? 1, drawable, uniform: rng.next() }));
      const got = await drawOnDevice(kernels, logits, V, deviceDraws);
      const cpuRng = new Rng(12);
      const cpu = Array.from({ length: draws }, () => sampleToken(logits, 0, V, full, cpuRng).id);
      const support = new Set(keptTokenIds(logits, 0, deviceDraws[0]!));
      for (const [who, ids] of [['GPU', [...got.ids]], ['CPU sampler', cpu]] as const) {
        const outside = ids.filter((id) => !support.has(id));
        if (outside.length > 0) throw new Error(`${JSON.stringify(params)}: the ${who} drew ids outside the kept set: ${[...new Set(outside)].slice(0, 5).join(', ')}`);
      }
      const [statistic, df] = twoSampleChiSquare(got.ids, cpu, V);
      const critical = chiSquareCritical(df);
      if (!(statistic < critical)) throw new Error(`${JSON.stringify(params)}: chi-square ${statistic.toFixed(1)} ≥ ${critical.toFixed(1)} (df ${df}): the GPU's draws do not follow the CPU sampler's distribution`);
      // The test can fail: the same statistic against a shifted distribution (temperature ×2) must exceed the bound.
      const shiftedRng = new Rng(13);
      const shifted = Array.from({ length: draws }, () => sampleToken(logits, 0, V, { ...full, temperature: params.temperature * 2 }, shiftedRng).id);
      const [shiftedStatistic] = twoSampleChiSquare(got.ids, shifted, V);
      if (!(shiftedStatistic > critical)) throw new Error(`${JSON.stringify(params)}: the chi-square test cannot tell temperature ×2 apart (${shiftedStatistic.toFixed(1)} ≤ ${critical.toFixed(1)})`);
    }
  },
};

const reproducibleCase: SamplerCase = {
  name: 'the same uniforms draw the same tokens (a seed reproduces a sample), other uniforms other tokens; greedy takes the lowest id of tied maxima',
  run: async (kernels) => {
    const V = 1000;
    const logits = randomLogits(2, V, 9);
    const drawsFor = (seed: number): TokenDraw[] => {
      const rng = new Rng(seed);
      return Array.from({ length: 64 }, (_, d) => ({ row: d % 2, temperature: 1, topK: d % 3 === 0 ? 20 : 0, topP: d % 4 === 0 ? 0.9 : 1, drawable: V, uniform: rng.next() }));
    };
    const first = await drawOnDevice(kernels, logits, V, drawsFor(1));
    const again = await drawOnDevice(kernels, logits, V, drawsFor(1));
    const other = await drawOnDevice(kernels, logits, V, drawsFor(2));
    if ([...first.ids].join() !== [...again.ids].join()) throw new Error('the same uniforms drew different tokens');
    if ([...first.ids].join() === [...other.ids].join()) throw new Error('different uniforms drew the very same 64 tokens');
    expectClose(again.logprobs, first.logprobs, { atol: 0, rtol: 0, label: 'logprobs of a repeated draw' });

    const tied = new Float32Array(V).fill(-1);
    tied[400] = 5;
    tied[123] = 5;
    tied[999] = 9; // past drawable
    const greedy = await drawOnDevice(kernels, tied, V, [{ row: 0, temperature: 0, topK: 0, topP: 1, drawable: 990, uniform: 0.5 }]);
    if (greedy.ids[0] !== 123) throw new Error(`greedy over tied maxima at 123 and 400 (999 not drawable) drew ${greedy.ids[0]}`);
  },
};

/** Every sampler check, in order. */
export const SAMPLER_CASES: SamplerCase[] = [
  ...SAMPLE_WORKGROUP_SIZES.flatMap((size) => [referenceCase(264, 3, size), referenceCase(5003, 4, size)]),
  distributionCase,
  reproducibleCase,
];
