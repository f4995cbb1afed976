/**
 * The fast backend's table RoPE against the reference: the same angles in float64 and the same
 * arithmetic, so the same values, for positions in any order, across a table that must grow, and
 * for two head sizes in turn (the table is rebuilt, not reused).
 */
import { describe, expect, it } from 'vitest';
import { createTableRope } from '../../../../src/gpu/fast-cpu/rope-table.ts';
import { ropeBackward, ropeForward } from '../../../../src/gpu/reference/rope.ts';
import { expectClose, randomArray, randomInts } from '../../../support/expect-close.ts';

describe('table rope', () => {
  it('rope_forward and rope_backward match reference exactly', () => {
    const rope = createTableRope();
    const cases: [B: number, T: number, NH: number, HS: number, maxPosition: number][] = [
      [2, 5, 3, 8, 5],
      [3, 7, 2, 8, 300], // positions beyond the first table
      [1, 4, 5, 6, 40], // another head size
    ];
    cases.forEach(([B, T, NH, HS, maxPosition], c) => {
      const positions = randomInts(B * T, 30 + c, maxPosition);
      const inp = randomArray(B * T * NH * HS, 40 + c);
      const expected = new Float32Array(inp.length);
      const actual = new Float32Array(inp.length);
      ropeForward(expected, inp, positions, B, T, NH, HS, 10000);
      rope.ropeForward(actual, inp, positions, B, T, NH, HS, 10000);
      expectClose(actual, expected, { atol: 0, rtol: 0, label: `forward, case ${c}` });
      const dout = randomArray(inp.length, 50 + c);
      const expectedGrad = randomArray(inp.length, 60 + c);
      const actualGrad = expectedGrad.slice();
      ropeBackward(expectedGrad, dout, positions, B, T, NH, HS, 10000);
      rope.ropeBackward(actualGrad, dout, positions, B, T, NH, HS, 10000);
      expectClose(actualGrad, expectedGrad, { atol: 0, rtol: 0, label: `backward, case ${c}` });
    });
  });

  it('refuses a negative position', () => {
    const rope = createTableRope();
    expect(() => rope.ropeForward(new Float32Array(4), new Float32Array(4), Int32Array.of(-1), 1, 1, 1, 4, 10000)).toThrow(/position -1 is negative/);
  });
});
