/**
 * Which matmul kernels a device runs: the variants of each of the three products (forward x·Wᵀ,
 * input gradient dout·W, weight gradient doutᵀ·x), the default per kind of adapter, and the adapter key
 * a timed trial's choice is remembered by (matmul-tuning.ts runs the trial, matmul-choice-cache.ts
 * remembers it). The op wrappers in ops.ts read the choice from their `Kernels`; tests and benchmarks
 * force a variant through `forceMatmul`.
 */
import { isSoftwareAdapter, type AdapterDescription } from './device.ts';

/** Kernels of the forward product: the 4×4, 8×16 or 16×16 register tile (the larger ones for software adapters), the 64×64 workgroup-memory tile (real GPUs). */
export const FORWARD_VARIANTS = ['tile4x4', 'tile8x16', 'tile16x16', 'workgroup'] as const;
/** Kernels of the input gradient: the 4×4, 8×16 or 16×16 register tile. */
export const INPUT_GRAD_VARIANTS = ['tile4x4', 'tile8x16', 'tile16x16'] as const;
/** Kernels of the weight gradient: the 4×4, 8×16 or 16×16 register tile (the last reading 4 tokens per accumulator update), or the 8×16 tile split over the tokens (split-K) then reduced. */
export const WEIGHT_GRAD_VARIANTS = ['tile4x4', 'tile8x16', 'tile16x16', 'splitk'] as const;

/** A forward matmul kernel. */
export type ForwardVariant = (typeof FORWARD_VARIANTS)[number];
/** An input-gradient matmul kernel. */
export type InputGradVariant = (typeof INPUT_GRAD_VARIANTS)[number];
/** A weight-gradient matmul kernel. */
export type WeightGradVariant = (typeof WEIGHT_GRAD_VARIANTS)[number];

/** The kernel each product runs on one device. */
export interface MatmulChoice {
  forward: ForwardVariant;
  inputGrad: InputGradVariant;
  weightGrad: WeightGradVariant;
  /** Where the choice came from: the adapter's kind, a timed trial on this device, a trial remembered from an earlier device or visit, or forced by the caller. */
  source: 'default' | 'trial' | 'cached' | 'forced';
}

/**
 * Below this many tiles of output the 16×16 and 8×16 kernels fall back to the next smaller tile: too few
 * threads to keep even a CPU's cores busy (the LoRA-skinny 64×576×16 ran at half the 4×4 tile's rate on SwiftShader).
 */
export const MIN_LARGE_TILES = 16;

/**
 * The 16×16 kernels fall back to the 8×16 tile below this many rows of output (a decoding batch of 8
 * rows: half of every 16-row tile idle; 0.55–0.8× the 8×16 tile at 8×576×576 and 8×576×1536, SwiftShader).
 */
export const MIN_ROWS_16 = 16;

/**
 * The 16×16 weight gradient falls back to the 8×16 tile below this many tokens: with few tokens its 64
 * accumulator read-modify-writes per thread outweigh the loads it saves (0.73× the 8×16 tile at 8 tokens,
 * 8×576×1536, SwiftShader; 0.94–1.8× at 64 tokens).
 */
export const MIN_TOKENS_16 = 32;

/**
 * The 16×16 weight gradient falls back to the 8×16 tile below this many output rows (OC): a single row
 * of 16×16 tiles (LoRA A's rank-16 side, 64×576×16) ran 0.79–0.94× the 8×16 tile on SwiftShader.
 */
export const MIN_WEIGHT_ROWS_16 = 32;

/** Split-K splits the tokens into chunks of at least this many. */
export const SPLIT_K_MIN_CHUNK = 64;
/** Split-K at most this many ways. */
export const SPLIT_K_MAX_SPLITS = 16;
/** Split-K's partial products take at most this many bytes of scratch (else fewer splits, or none). */
export const SPLIT_K_MAX_SCRATCH_BYTES = 64 * 1024 * 1024;
/** Split-K only where the output has fewer 8×16 tiles than this: larger outputs already fill a GPU. */
export const SPLIT_K_MAX_TILES = 8192;

/** The choice before any trial: register tiles without barriers on software adapters, the workgroup-memory tile for the forward on real GPUs. */
export function defaultMatmulChoice(adapter: AdapterDescription): MatmulChoice {
  if (isSoftwareAdapter(adapter)) return { forward: 'tile16x16', inputGrad: 'tile16x16', weightGrad: 'tile16x16', source: 'default' };
  return { forward: 'workgroup', inputGrad: 'tile4x4', weightGrad: 'splitk', source: 'default' };
}

/** The cache key of an adapter (the matmul choice, the decoder's path trial): what `adapter.info` says about it. */
export function adapterKey(adapter: AdapterDescription): string {
  return [adapter.vendor, adapter.architecture, adapter.device, adapter.description, adapter.isFallbackAdapter ? 'fallback' : ''].join('|');
}

/** Parses a forced choice such as "forward=tile8x16,inputGrad=tile4x4,weightGrad=splitk" (any subset); throws on an unknown name. */
export function parseMatmulChoice(text: string): Partial<Omit<MatmulChoice, 'source'>> {
  const choice: Partial<Omit<MatmulChoice, 'source'>> = {};
  for (const part of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [product = '', variant = ''] = part.split('=').map((s) => s.trim());
    const allowed = product === 'forward' ? FORWARD_VARIANTS : product === 'inputGrad' ? INPUT_GRAD_VARIANTS : product === 'weightGrad' ? WEIGHT_GRAD_VARIANTS : null;
    if (!allowed) throw new Error(`unknown matmul product "${product}" in "${text}": use forward, inputGrad or weightGrad`);
    if (!(allowed as readonly string[]).includes(variant)) throw new Error(`unknown ${product} variant "${variant}": use one of ${allowed.join(', ')}`);
    (choice as Record<string, string>)[product] = variant;
  }
  return choice;
}
