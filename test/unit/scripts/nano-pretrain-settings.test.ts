// The bigger-nano pretraining settings: the defaults are the shipped nano's shape and corpus, another
// pool scales the corpus with its words, and shape flags that the model cannot have are refused.
import { describe, expect, test } from 'vitest';
import { NANO_CONFIG } from '../../../src/gpu/inference/presets.ts';
import { corpusSizes, modelShape, NANO_CORPUS } from '../../../scripts/nano/pretrain-settings.ts';

describe('nano pretraining settings', () => {
  test('no flags: the shipped nano shape and corpus, for the 300-word pool', () => {
    expect(modelShape({})).toEqual(NANO_CONFIG);
    expect(corpusSizes(300, {})).toEqual(NANO_CORPUS);
  });

  test('a bigger pool scales word lists and fits lists with its words, games with its training answers; given counts win', () => {
    expect(corpusSizes(2315, {})).toEqual({ wordLists: 15433, games: 44300, fits: 23150, reverse: 800 });
    expect(corpusSizes(600, { games: '200', 'word-lists': '0' })).toEqual({ wordLists: 0, games: 200, fits: 6000, reverse: 800 });
    expect(() => corpusSizes(600, { fits: '-1' })).toThrow(/--fits must be a whole number/);
  });

  test('shape flags give a bigger model, with head size hidden / heads', () => {
    expect(modelShape({ layers: '6', hidden: '256', intermediate: '768', heads: '4', 'kv-heads': '2' })).toEqual({
      ...NANO_CONFIG,
      num_hidden_layers: 6,
      hidden_size: 256,
      intermediate_size: 768,
      num_attention_heads: 4,
      num_key_value_heads: 2,
      head_dim: 64,
    });
    expect(() => modelShape({ hidden: '100', heads: '3' })).toThrow(/must be an even whole number/);
    expect(() => modelShape({ heads: '4', hidden: '128', 'kv-heads': '3' })).toThrow(/multiple of --kv-heads/);
    expect(() => modelShape({ layers: '0' })).toThrow(/--layers must be a positive whole number/);
  });
});
