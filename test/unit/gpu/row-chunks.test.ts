import { describe, expect, test } from 'vitest';
import { rowChunkName, rowsPerChunk, splitRowChunks } from '../../../src/gpu/webgpu/row-chunks.ts';

const MiB = 2 ** 20;

describe('splitRowChunks', () => {
  test("Qwen2.5-0.5B's embedding (151,936 × 896, f32) under a 128 MiB binding: 5 chunks of whole rows, each within it, covering the table once", () => {
    const shapes: Array<[string, number[]]> = [
      ['model.embed_tokens.weight', [151_936, 896]],
      ['model.norm.weight', [896]],
    ];
    const { shapes: stored, chunks } = splitRowChunks(shapes, 4, 128 * MiB);
    const list = chunks.get('model.embed_tokens.weight')!;
    expect(list.map((chunk) => chunk.rows)).toEqual([37_448, 37_448, 37_448, 37_448, 2_144]);
    expect(list.map((chunk) => chunk.firstRow)).toEqual([0, 37_448, 74_896, 112_344, 149_792]);
    expect(list.every((chunk) => chunk.rows * 896 * 4 <= 128 * MiB && chunk.rows % 4 === 0)).toBe(true);
    expect(stored.map(([name]) => name)).toEqual([...list.map((chunk) => chunk.name), 'model.norm.weight']);
    expect(stored[0]).toEqual([rowChunkName('model.embed_tokens.weight', 0), [37_448, 896]]);
  });

  test('f16 halves the bytes: the same table in 3 chunks; a table that fits, or a tensor that is not a vocabulary table, stays whole', () => {
    expect(splitRowChunks([['lm_head.weight', [151_936, 896]]], 2, 128 * MiB).chunks.get('lm_head.weight')!.length).toBe(3);
    const fits = splitRowChunks([['model.embed_tokens.weight', [49_152, 576]]], 4, 128 * MiB);
    expect(fits.chunks.size).toBe(0);
    expect(fits.shapes).toEqual([['model.embed_tokens.weight', [49_152, 576]]]);
    const other = splitRowChunks([['model.layers.0.mlp.up_proj.weight', [4864, 896]]], 4, MiB);
    expect(other.chunks.size).toBe(0);
  });

  test('not even 4 rows within the cap is an error naming the bytes', () => {
    expect(rowsPerChunk(100, 1024, 4, 32 * 1024)).toBe(8);
    expect(() => rowsPerChunk(100, 1024, 4, 8 * 1024)).toThrow(/4 rows of 1024 values need 16384 bytes, past the 8192 bytes/);
  });
});
