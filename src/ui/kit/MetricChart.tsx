/** One live line chart (uPlot) of metrics over steps: each series a line; a series may carry a ± band drawn as two thin lines. */
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { STEP_SCALE } from './step-axis.ts';

/** A line of a chart: its values per step (null = missing). */
export interface ChartSeries {
  label: string;
  values: (number | null)[];
  color: string;
  /** Half-width of a band around the line (e.g. the std), drawn as two faint lines. */
  band?: (number | null)[];
}

const WIDTH = 330;
/** Tick spacings of the step axis: whole steps only. */
const STEP_INCREMENTS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000];
/** Dots on the line only while there are few steps (a single step is otherwise invisible). */
const showPoints = (chart: uPlot) => chart.data[0].length <= 12;
const HEIGHT = 150;

/** A chart titled `title` over `steps`; redrawn in place when the data change. */
export function MetricChart({ title, steps, series, testId, yRange }: { title: string; steps: number[]; series: ChartSeries[]; testId?: string; yRange?: [number, number] }) {
  const container = useRef<HTMLDivElement>(null);
  const chart = useRef<uPlot | null>(null);
  const shape = series.map((item) => `${item.label}${item.band ? '±' : ''}`).join('|');

  const data = (): uPlot.AlignedData => {
    const columns: (number | null)[][] = [];
    for (const item of series) {
      columns.push(item.values);
      if (item.band) {
        columns.push(item.values.map((value, i) => (value === null || item.band![i] == null ? null : value + item.band![i]!)));
        columns.push(item.values.map((value, i) => (value === null || item.band![i] == null ? null : value - item.band![i]!)));
      }
    }
    return [steps, ...columns] as uPlot.AlignedData;
  };

  useEffect(() => {
    if (!container.current) return;
    const lines: uPlot.Series[] = [{ label: 'step' }];
    for (const item of series) {
      lines.push({ label: item.label, stroke: item.color, width: 2, spanGaps: true, points: { show: showPoints } });
      if (item.band) {
        lines.push({ label: `${item.label} + std`, stroke: item.color, width: 1, dash: [4, 4], alpha: 0.5, spanGaps: true, points: { show: false } });
        lines.push({ label: `${item.label} − std`, stroke: item.color, width: 1, dash: [4, 4], alpha: 0.5, spanGaps: true, points: { show: false } });
      }
    }
    chart.current = new uPlot(
      {
        width: WIDTH,
        height: HEIGHT,
        series: lines,
        legend: { show: false },
        cursor: { show: true, drag: { x: false, y: false } },
        scales: {
          x: STEP_SCALE,
          y: {
            range: yRange ? () => yRange : (_u, min, max) => (min === max ? [min - Math.max(1, Math.abs(min) * 0.1), max + Math.max(1, Math.abs(max) * 0.1)] : uPlot.rangeNum(min, max, 0.1, true)),
          },
        },
        axes: [
          { size: 28, font: '11px system-ui', incrs: STEP_INCREMENTS },
          { size: 58, font: '11px system-ui' },
        ],
      },
      data(),
      container.current,
    );
    return () => {
      chart.current?.destroy();
      chart.current = null;
    };
    // The chart is rebuilt only when its series change; new data go through setData below.
  }, [shape]);

  useEffect(() => {
    chart.current?.setData(data());
  });

  return (
    <figure className="chart" data-testid={testId}>
      <figcaption>
        {title}
        <span className="chart-legend">
          {series.map((item) => (
            <span key={item.label} style={{ color: item.color }}>
              ● {item.label}
            </span>
          ))}
        </span>
      </figcaption>
      <div ref={container} />
      {steps.length === 0 && <div className="chart-empty">no steps yet</div>}
    </figure>
  );
}
