import { describe, expect, test } from 'vitest';
import { groupParams } from '../../../src/gpu/webgpu/param-store.ts';

describe('groupParams', () => {
  const shapes: Array<[string, number[]]> = [
    ['a', [100]], // 400 bytes
    ['b', [30]], // 120 bytes, at 512
    ['c', [200]], // 800 bytes: at 768 after a and b, past a 1100-byte cap
    ['d', [10]],
  ];

  test('starts a new buffer when the next aligned tensor would pass the cap, keeping the order', () => {
    const groups = groupParams(shapes, { bytesPerValue: 4, maxBufferBytes: 1100, alignmentBytes: 256 }); // d at 1024 + 40 bytes fits after c
    expect(groups.map((group) => group.map(([name]) => name))).toEqual([['a', 'b'], ['c', 'd']]);
  });

  test('a tensor larger than the cap gets a buffer alone; no cap keeps one buffer', () => {
    expect(groupParams(shapes, { bytesPerValue: 4, maxBufferBytes: 500, alignmentBytes: 256 }).map((group) => group.length)).toEqual([1, 1, 1, 1]);
    expect(groupParams(shapes, { bytesPerValue: 2, maxBufferBytes: Infinity, alignmentBytes: 256 })).toHaveLength(1);
  });
});
