import { describe, expect, test } from 'vitest';
import { LM_HEAD_CHUNK_BYTES, lmHeadChunkRows } from '../../../src/gpu/webgpu/lm-head.ts';

describe('lmHeadChunkRows', () => {
  test('fills the chunk budget with whole groups of aligned rows', () => {
    // SmolLM2's vocabulary: 32 MiB / (49152 · 4 bytes) = 170 rows → 128, two groups of 64
    expect(lmHeadChunkRows(2048, 49152, 64)).toBe(128);
    expect(128 * 49152 * 4).toBeLessThanOrEqual(LM_HEAD_CHUNK_BYTES);
    // Qwen2.5's: 55 rows fit, so one group of 64 (38 MiB, just over the aim: a chunk is never empty)
    expect(lmHeadChunkRows(2048, 151936, 64)).toBe(64);
  });

  test('never exceeds the batch, and a small vocabulary takes the whole batch in one chunk', () => {
    expect(lmHeadChunkRows(40, 151936, 64)).toBe(40);
    expect(lmHeadChunkRows(512, 264, 64)).toBe(512);
  });

  test('a smaller budget gives smaller chunks', () => {
    expect(lmHeadChunkRows(2048, 49152, 64, 8 * 2 ** 20)).toBe(64);
    expect(lmHeadChunkRows(2048, 1000, 64, 1000 * 4 * 200)).toBe(192);
  });
});
