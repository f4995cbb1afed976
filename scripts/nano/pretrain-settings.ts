/**
 * The pretraining script's settings that depend on each other: the model shape from its flags
 * (defaults: NANO_CONFIG) and the corpus sizes from the answer pool (defaults: the shipped nano's
 * counts for the 300-word pool, scaled with the pool for any other size).
 */
import { COMPACT_HELD_OUT, COMPACT_POOL_SIZE } from '../../src/envs/builtin/wordle-compact.ts';
import { NANO_CONFIG } from '../../src/gpu/inference/presets.ts';
import type { ModelConfig } from '../../src/gpu/model/config.ts';

/** The shape flags: layers, hidden size, MLP size, attention heads and KV heads (unset = NANO_CONFIG's). */
export interface ShapeFlags {
  layers?: string | undefined;
  hidden?: string | undefined;
  intermediate?: string | undefined;
  heads?: string | undefined;
  'kv-heads'?: string | undefined;
}

/** A flag's value as a positive whole number, or `fallback` when unset; throws naming the flag otherwise. */
export function positiveInteger(flag: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const number = Number(value);
  if (!Number.isInteger(number) || number <= 0) throw new Error(`--${flag} must be a positive whole number, got ${JSON.stringify(value)}`);
  return number;
}

/** NANO_CONFIG with the shape flags applied; head_dim is hidden / heads (an even whole number), and heads a multiple of KV heads. */
export function modelShape(flags: ShapeFlags): ModelConfig {
  const hidden = positiveInteger('hidden', flags.hidden, NANO_CONFIG.hidden_size);
  const heads = positiveInteger('heads', flags.heads, NANO_CONFIG.num_attention_heads);
  const kvHeads = positiveInteger('kv-heads', flags['kv-heads'], NANO_CONFIG.num_key_value_heads);
  const headDim = hidden / heads;
  if (!Number.isInteger(headDim) || headDim % 2 !== 0) throw new Error(`--hidden (${hidden}) / --heads (${heads}) must be an even whole number (the head size)`);
  if (heads % kvHeads !== 0) throw new Error(`--heads (${heads}) must be a multiple of --kv-heads (${kvHeads})`);
  return {
    ...NANO_CONFIG,
    hidden_size: hidden,
    intermediate_size: positiveInteger('intermediate', flags.intermediate, NANO_CONFIG.intermediate_size),
    num_hidden_layers: positiveInteger('layers', flags.layers, NANO_CONFIG.num_hidden_layers),
    num_attention_heads: heads,
    num_key_value_heads: kvHeads,
    head_dim: headDim,
  };
}

/** How many of each generated transcript the corpus holds. */
export interface CorpusSizes {
  wordLists: number;
  games: number;
  fits: number;
  reverse: number;
}

/** The shipped nano's corpus, for the 300-word pool. */
export const NANO_CORPUS: CorpusSizes = { wordLists: 2000, games: 4000, fits: 3000, reverse: 800 };

/**
 * The corpus sizes for a pool: each flag given wins; otherwise the shipped nano's counts for the
 * 300-word pool, and for another pool those counts scaled so each word is seen about as often:
 * word lists and fits lists with the pool, games with its training answers (the non-held-out words).
 */
export function corpusSizes(poolSize: number, flags: { 'word-lists'?: string | undefined; games?: string | undefined; fits?: string | undefined; reverse?: string | undefined }): CorpusSizes {
  const words = poolSize / COMPACT_POOL_SIZE;
  const answers = (poolSize - COMPACT_HELD_OUT) / (COMPACT_POOL_SIZE - COMPACT_HELD_OUT);
  const count = (flag: string, value: string | undefined, base: number, scale: number) => {
    if (value === undefined) return Math.round(base * scale);
    const number = Number(value);
    if (!Number.isInteger(number) || number < 0) throw new Error(`--${flag} must be a whole number, got ${JSON.stringify(value)}`);
    return number;
  };
  return {
    wordLists: count('word-lists', flags['word-lists'], NANO_CORPUS.wordLists, words),
    games: count('games', flags.games, NANO_CORPUS.games, answers),
    fits: count('fits', flags.fits, NANO_CORPUS.fits, words),
    reverse: count('reverse', flags.reverse, NANO_CORPUS.reverse, 1),
  };
}
