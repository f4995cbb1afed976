/** The charts' one palette: lines take its colours in order and start over after the last; no other UI module writes a colour of its own. */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, test } from 'vitest';
import { CHART_COLORS, chartColor } from '../../../src/ui/kit/chart-palette.ts';
import { compareSeries } from '../../../src/ui/features/runs/run-compare.ts';
import type { GrpoStepMetrics } from '../../../src/workers/engine-bridge.ts';

const UI = resolve(new URL('../../../src/ui', import.meta.url).pathname);

/** The .ts and .tsx files under `folder`, at any depth. */
function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

describe('chart palette', () => {
  test('line i takes colour i, and the colours start over after the last', () => {
    expect(new Set(CHART_COLORS).size).toBe(CHART_COLORS.length);
    expect(CHART_COLORS.map((_color, i) => chartColor(i))).toEqual(CHART_COLORS);
    expect(chartColor(CHART_COLORS.length)).toBe(CHART_COLORS[0]);
    expect(chartColor(CHART_COLORS.length + 2)).toBe(CHART_COLORS[2]);
  });

  test("the Runs tab's comparison gives run i the palette's colour i", () => {
    const step = { step: 1, reward: { mean: 0.5, std: 0.1 } } as unknown as GrpoStepMetrics;
    const runs = [0, 1, 2].map((i) => ({ id: `r${i}`, environment: 'reverse-text', createdAt: i, grpo: [step], sft: [], evaluations: [] }));
    const compared = compareSeries(runs as never, 'reward');
    expect(compared.series.map((series) => series.color)).toEqual([chartColor(0), chartColor(1), chartColor(2)]);
  });

  test('no other module under src/ui writes a colour literal (a palette is written once)', () => {
    const files = sourceFiles(UI);
    expect(files.length).toBeGreaterThan(80);
    const writing = files.filter((file) => /['"`]#[0-9a-fA-F]{3,8}['"`]/.test(readFileSync(file, 'utf8'))).map((file) => relative(UI, file));
    expect(writing).toEqual(['kit/chart-palette.ts']);
  });
});
