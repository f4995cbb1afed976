/** The Runs tab: every stored training run (environment, model, date, steps, final reward), to reopen, delete, or tick and compare (reward and pass-rate curves overlaid, and a table of final metrics). */
import { useState } from 'react';
import { deleteRun, openRun } from '../training/training-actions.ts';
import { usePlayground } from '../../store/index.ts';
import type { TrainingRun } from '../training/training-slice.ts';
import { MetricChart } from '../../kit/MetricChart.tsx';
import { compareSeries, runLabel, runRow, type RunRow } from './run-compare.ts';
import { isTraining } from '../../store/selectors.ts';

const fixed = (value: number | null) => (value === null ? '—' : value.toFixed(3));
const percent = (value: number | null) => (value === null ? '—' : `${(value * 100).toFixed(1)}%`);

/** The view, filling the main area; `onOpened` switches to the Training tab after a run is reopened. */
export function RunsView({ onOpened }: { onOpened: () => void }) {
  const runs = usePlayground((state) => state.pastRuns);
  const current = usePlayground((state) => state.trainingRun?.id);
  const busy = usePlayground(isTraining);
  const [ticked, setTicked] = useState<string[]>([]);
  const present = ticked.filter((id) => runs.some((run) => run.id === id));
  const toggle = (id: string) => setTicked((list) => (list.includes(id) ? list.filter((item) => item !== id) : [...list, id]));
  const compared = present.map((id) => runs.find((run) => run.id === id)!);

  const remove = async (run: TrainingRun) => {
    if (!confirm(`Delete the run on ${run.environment} from ${new Date(run.createdAt).toLocaleString()}? Its metrics and checkpoint are removed from this browser.`)) return;
    await deleteRun(run.id);
    setTicked((list) => list.filter((item) => item !== run.id));
  };

  if (runs.length === 0) {
    return (
      <div className="runs-view empty" data-testid="runs-view">
        No stored runs yet. Warm up or train the in-tab model and its runs appear here, kept in this browser.
      </div>
    );
  }
  return (
    <div className="runs-view" data-testid="runs-view">
      <p className="hint">Runs are kept in this browser (metrics, evaluations and a checkpoint). Tick two or more to compare them.</p>
      <table className="runs-table">
        <thead>
          <tr>
            <th>
              <span className="visually-hidden">Compare</span>
            </th>
            <th>Environment</th>
            <th>Model</th>
            <th className="runs-started">Started</th>
            <th>Steps</th>
            <th>Final reward</th>
            <th>Pass rate</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {runs.map((run) => {
            const row = runRow(run);
            return (
              <tr key={run.id} className={run.id === current ? 'selected' : ''} data-testid="runs-row">
                <td>
                  <input type="checkbox" checked={present.includes(run.id)} onChange={() => toggle(run.id)} aria-label={`Compare ${runLabel(run)}`} data-testid="runs-compare-check" />
                </td>
                <td title={`started ${new Date(row.createdAt).toLocaleString()}`}>
                  <code>{row.environment}</code>
                </td>
                <td data-label="model">
                  {row.model}
                  {run.startedFrom && (
                    <div className="hint" data-testid="runs-started-from">
                      from {run.startedFrom}
                    </div>
                  )}
                </td>
                <td className="runs-started" data-label="started">
                  {new Date(row.createdAt).toLocaleString()}
                </td>
                <td data-label="steps">
                  {row.sftSteps} SFT + {row.grpoSteps} GRPO
                </td>
                <td data-label="final reward">{fixed(row.finalReward)}</td>
                <td data-label="pass rate">{percent(row.finalPassRate)}</td>
                <td>
                  <div className="runs-actions">
                    <button
                      type="button"
                      disabled={busy}
                      onClick={() => {
                        openRun(run.id);
                        onOpened();
                      }}
                      data-testid="runs-open"
                    >
                      Open
                    </button>
                    <button type="button" className="quiet" disabled={busy && run.id === current} onClick={() => void remove(run)} data-testid="runs-delete">
                      Delete
                    </button>
                  </div>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {compared.length >= 2 ? <Comparison runs={compared} /> : <p className="hint">{compared.length === 1 ? 'Tick one more run to compare.' : ''}</p>}
    </div>
  );
}

function Comparison({ runs }: { runs: TrainingRun[] }) {
  const reward = compareSeries(runs, 'reward');
  const passRate = compareSeries(runs, 'passRate');
  const rows: { run: TrainingRun; row: RunRow; color: string; label: string }[] = runs.map((run, i) => ({ run, row: runRow(run), color: reward.series[i]!.color, label: reward.series[i]!.label }));
  return (
    <section className="comparison" aria-label="Comparison" data-testid="runs-comparison">
      <h2>Comparing {runs.length} runs</h2>
      <ul className="compare-legend" data-testid="compare-legend">
        {rows.map(({ run, color, label }) => (
          <li key={run.id}>
            <span className="swatch" style={{ background: color }} />
            {label}
          </li>
        ))}
      </ul>
      <div className="chart-grid">
        <MetricChart testId="compare-reward" title="Reward (mean) by GRPO step" steps={reward.steps} series={reward.series} />
        <MetricChart testId="compare-pass-rate" title="Pass rate by GRPO step" steps={passRate.steps} yRange={[0, 1]} series={passRate.series} />
      </div>
      <table className="scores" data-testid="compare-table">
        <thead>
          <tr>
            <th>Run</th>
            <th>SFT</th>
            <th>GRPO</th>
            <th>final reward</th>
            <th>final pass rate</th>
            <th>last evaluation</th>
          </tr>
        </thead>
        <tbody>
          {rows.map(({ run, row, color, label }) => (
            <tr key={run.id}>
              <td>
                <span className="swatch" style={{ background: color }} />
                {label}
              </td>
              <td>{row.sftSteps}</td>
              <td>{row.grpoSteps}</td>
              <td>{fixed(row.finalReward)}</td>
              <td>{percent(row.finalPassRate)}</td>
              <td>{row.lastEvaluation ? `${fixed(row.lastEvaluation.reward)} · ${percent(row.lastEvaluation.passRate)}` : '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
