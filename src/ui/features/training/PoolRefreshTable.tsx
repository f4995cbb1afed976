/** The task-pool refreshes of the open run (synthesis during GRPO), on the GRPO charts' step axis (the step each refresh followed): pool size over steps, and one row per refresh with what joined, retired and came back, and the pass rates it measured as a five-bin histogram; the last refresh's failure, if any. */
import { usePlayground } from '../../store/index.ts';
import { MetricChart } from '../../kit/MetricChart.tsx';
import { chartColor } from '../../kit/chart-palette.ts';
import type { TabPoolRefresh } from './pool-synthesis.ts';
import './pool-synthesis.css';

/** The bins of a refresh's histogram: pass rates [0, 0.2), …, [0.8, 1]. */
const BINS = ['0–.2', '.2–.4', '.4–.6', '.6–.8', '.8–1'];

/** The run's refreshes; nothing when the run has none and its job no synthesis. */
export function PoolRefreshTable() {
  const refreshes = usePlayground((state) => state.trainingRun?.poolRefreshes) ?? [];
  const synthesis = usePlayground((state) => (state.trainingRun?.lastJob?.phase === 'grpo' ? state.trainingRun.lastJob.synthesis : undefined));
  if (refreshes.length === 0 && !synthesis) return null;
  const error = synthesis?.pool.error;
  return (
    <section className="pool-refreshes" aria-label="Task-pool refreshes" data-testid="pool-refreshes">
      <h3>Task synthesis during training</h3>
      {synthesis && (
        <p className="hint" data-testid="pool-now">
          Pool now: {synthesis.pool.tasks.length} tasks, {synthesis.pool.retired.length} retired; refresh{' '}
          {synthesis.settings.every === 1 ? 'after every step' : `every ${synthesis.settings.every} steps`}, keep band {synthesis.settings.keep[0]}–{synthesis.settings.keep[1]}, {synthesis.settings.k}{' '}
          attempts per task, generator {synthesis.settings.generator === 'judge' ? "the Judge card's model" : 'offline heuristic'}.
        </p>
      )}
      {error && (
        <p className="failure" role="alert" data-testid="pool-refresh-error">
          {error}
        </p>
      )}
      {refreshes.length > 0 && (
        <>
          <div className="chart-grid">
            <MetricChart
              testId="chart-pool-size"
              title="Task pool size"
              steps={refreshes.map((refresh) => refresh.runStep)}
              series={[
                { label: 'pool', values: refreshes.map((refresh) => refresh.poolSize), color: chartColor(0) },
                { label: 'retired in all', values: refreshes.map((refresh) => refresh.retiredTotal), color: chartColor(3) },
              ]}
            />
          </div>
          <table className="scores" data-testid="pool-refresh-table">
            <thead>
              <tr>
                <th>Refresh</th>
                <th>after step</th>
                <th>pool</th>
                <th>new (kept)</th>
                <th>added</th>
                <th>retired</th>
                <th>replayed (rejoined)</th>
                <th title={`Tasks measured this refresh (pool, candidates, replays) per pass-rate bin: ${BINS.join(', ')}`}>pass rates, 0 → 1 in fifths</th>
              </tr>
            </thead>
            <tbody>
              {refreshes.map((refresh) => (
                <RefreshRow key={`${refresh.runStep}-${refresh.refresh}`} refresh={refresh} />
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}

function RefreshRow({ refresh }: { refresh: TabPoolRefresh }) {
  const most = Math.max(1, ...refresh.histogram);
  return (
    <tr data-testid="pool-refresh-row">
      <td>{refresh.refresh + 1}</td>
      <td>{refresh.runStep}</td>
      <td>
        {refresh.poolBefore} → {refresh.poolSize}
      </td>
      <td>{refresh.candidates}</td>
      <td>{refresh.added}</td>
      <td>{refresh.retired}</td>
      <td>
        {refresh.replayed} ({refresh.rejoined})
      </td>
      <td>
        <span className="pool-histogram" aria-label={`pass-rate histogram: ${refresh.histogram.map((count, i) => `${count} in ${BINS[i]}`).join(', ')}`}>
          {refresh.histogram.map((count, i) => (
            <span key={BINS[i]} className="pool-histogram-bin" title={`${count} tasks with pass rate ${BINS[i]}`}>
              <span className="pool-histogram-bar" style={{ height: `${Math.round((count / most) * 100)}%`, background: chartColor(0) }} />
              <span className="pool-histogram-count">{count}</span>
            </span>
          ))}
        </span>
      </td>
    </tr>
  );
}
