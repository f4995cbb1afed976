/** The training view: live charts of the current (or reopened) run and the latest GRPO step's rollouts with tokens coloured by log-probability; stored runs are in the Runs tab. */
import type { EngineTrainingRollout } from '../../../workers/engine-bridge.ts';
import { newRun } from './training-actions.ts';
import { usePlayground } from '../../store/index.ts';
import { MetricChart, type ChartSeries } from '../../kit/MetricChart.tsx';
import { countOf, environmentReplies, rewardLines } from '../../kit/result-text.ts';
import { isTraining } from '../../store/selectors.ts';
import { GRPO_CHARTS, pickedCharts } from './grpo-charts.ts';
import { chartColor } from '../../kit/chart-palette.ts';
import { PoolRefreshTable } from './PoolRefreshTable.tsx';

/** The compact Wordle's win reward and its two weight-0 metrics (src/envs/builtin/wordle-compact.ts): a run that has them gets their charts. */
const WORDLE_WIN = 'compactWinReward';
const WORDLE_GUESSES = 'guessesMetric';
const WORDLE_INVALID = 'compactInvalidGuessesMetric';

/** The whole view, filling the main area; `onShowRuns` opens the Runs tab. */
export function TrainingView({ onShowRuns }: { onShowRuns: () => void }) {
  const run = usePlayground((state) => state.trainingRun);
  return (
    <div className="training-view" data-testid="training-view">
      <RunBar onShowRuns={onShowRuns} />
      {run ? (
        <RunCharts />
      ) : (
        <div className="empty">
          No training run yet. Choose <b>Warm up</b> or <b>Train</b> in the run panel and press Start; or reopen a stored run in the Runs tab.
        </div>
      )}
      <LatestRollouts />
    </div>
  );
}

function RunCharts() {
  const run = usePlayground((state) => state.trainingRun)!;
  const grpo = run.grpo;
  const steps = grpo.map((metrics) => metrics.step);
  // A reward function whose line is the mean at every step would hide under it: it is named in the mean's label.
  const { meanLabel, functions, ownScale } = rewardLines(grpo);
  const line = (label: string, values: (number | null)[], color: string): ChartSeries => ({ label, values, color });
  const reward: ChartSeries[] = [
    { label: meanLabel, values: grpo.map((m) => m.reward.mean), band: grpo.map((m) => m.reward.std), color: chartColor(0) },
    ...functions.map((name, i) =>
      line(
        name,
        grpo.map((m) => m.rewards[name] ?? null),
        chartColor(i + 1),
      ),
    ),
  ];
  const last = grpo.at(-1);
  const picks = usePlayground((state) => state.chartPicks);
  return (
    <section className="run-charts" aria-label="Training charts">
      <header className="run-header">
        <h2>
          Run on <code>{run.environment}</code>
        </h2>
        <span className="chip" data-testid="run-sft-steps">
          {countOf(run.sft.length, 'SFT step')}
        </span>
        <span className="chip" data-testid="run-grpo-steps">
          {countOf(run.grpo.length, 'GRPO step')}
        </span>
        {run.checkpointStep !== null && <span className="chip">checkpoint at step {run.checkpointStep}</span>}
        {last?.skipped && (
          <span className="chip" title={last.skipped}>
            last update skipped
          </span>
        )}
        {last?.firstError && (
          <span className="chip chip-bad" title={last.firstError}>
            errors in rollouts
          </span>
        )}
      </header>
      <div className="chart-grid">
        <MetricChart
          testId="chart-sft-loss"
          title="SFT loss"
          steps={run.sft.map((m) => m.step)}
          series={[
            line(
              'loss',
              run.sft.map((m) => m.loss),
              chartColor(1),
            ),
          ]}
        />
        <MetricChart testId="chart-reward" title="Reward (mean ± std)" steps={steps} series={reward} />
        <MetricChart
          testId="chart-pass-rate"
          title="Pass rate"
          steps={steps}
          yRange={[0, 1]}
          series={[
            line(
              'pass rate',
              grpo.map((m) => m.passRate),
              chartColor(2),
            ),
          ]}
        />
        <MetricChart
          testId="chart-loss"
          title="GRPO loss"
          steps={steps}
          series={[
            line(
              'loss',
              grpo.map((m) => m.loss),
              chartColor(1),
            ),
          ]}
        />
        {ownScale
          .filter((name) => name !== WORDLE_GUESSES && name !== WORDLE_INVALID)
          .map((name, i) => (
            <MetricChart
              key={name}
              testId={`chart-function-${name}`}
              title={`${name} (own scale)`}
              steps={steps}
              series={[
                line(
                  name,
                  grpo.map((m) => m.rewards[name] ?? null),
                  chartColor(functions.length + i + 1),
                ),
              ]}
            />
          ))}
        {pickedCharts(picks).map((chart) => (
          <MetricChart key={chart.key} testId={`chart-${chart.key}`} title={chart.title} steps={steps} series={chart.series(grpo)} {...(chart.yRange ? { yRange: chart.yRange } : {})} />
        ))}
        {last !== undefined && WORDLE_WIN in last.rewards && (
          <>
            <MetricChart
              testId="chart-wordle-win"
              title="Wordle: win rate"
              steps={steps}
              yRange={[0, 1]}
              series={[
                line(
                  'win rate',
                  grpo.map((m) => m.rewards[WORDLE_WIN] ?? null),
                  chartColor(2),
                ),
              ]}
            />
            <MetricChart
              testId="chart-wordle-turns"
              title="Wordle: valid guesses per game"
              steps={steps}
              series={[
                line(
                  'guesses',
                  grpo.map((m) => m.rewards[WORDLE_GUESSES] ?? null),
                  chartColor(3),
                ),
              ]}
            />
            <MetricChart
              testId="chart-wordle-invalid"
              title="Wordle: invalid guesses per game"
              steps={steps}
              series={[
                line(
                  'invalid',
                  grpo.map((m) => m.rewards[WORDLE_INVALID] ?? null),
                  chartColor(1),
                ),
              ]}
            />
          </>
        )}
      </div>
      <ChartPicker />
      <PoolRefreshTable />
      {run.evaluations.length > 0 && (
        <table className="scores" data-testid="run-evaluations">
          <thead>
            <tr>
              <th>Evaluation</th>
              <th>reward</th>
              <th>pass rate</th>
            </tr>
          </thead>
          <tbody>
            {run.evaluations.map((evaluation) => (
              <tr key={evaluation.at}>
                <td>{evaluation.sftSteps + evaluation.grpoSteps === 0 ? 'before training (the starting weights)' : `after ${evaluation.sftSteps} SFT + ${evaluation.grpoSteps} GRPO steps`}</td>
                <td>{evaluation.summary.reward.mean.toFixed(3)}</td>
                <td>{(evaluation.summary.passRate * 100).toFixed(1)}%</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/** "More charts": which optional GRPO charts the grid shows (remembered while the tab is open). */
function ChartPicker() {
  const picks = usePlayground((state) => state.chartPicks);
  const setChartPicks = usePlayground((state) => state.setChartPicks);
  return (
    <details className="chart-picker" data-testid="chart-picker">
      <summary>
        More charts ({picks.length} of {GRPO_CHARTS.length} shown)
      </summary>
      <div className="chart-picker-options">
        {GRPO_CHARTS.map((chart) => (
          <label key={chart.key} title={chart.help}>
            <input
              type="checkbox"
              data-testid={`pick-${chart.key}`}
              checked={picks.includes(chart.key)}
              onChange={(event) => setChartPicks(event.target.checked ? [...picks, chart.key] : picks.filter((key) => key !== chart.key))}
            />
            {chart.title}
          </label>
        ))}
      </div>
    </details>
  );
}

function LatestRollouts() {
  const rollouts = usePlayground((state) => state.latestRollouts);
  const step = usePlayground((state) => state.trainingRun?.grpo.at(-1)?.step);
  if (rollouts.length === 0) return null;
  return (
    <section className="latest-rollouts" data-testid="training-rollouts" aria-label="Rollouts of the latest step">
      <h2>
        Rollouts of step {step ?? '—'} <small className="muted">tokens coloured by probability: red unlikely, green likely</small>
      </h2>
      <ol>
        {rollouts.map((rollout, index) => (
          <TrainingRollout key={index} rollout={rollout} />
        ))}
      </ol>
    </section>
  );
}

function TrainingRollout({ rollout }: { rollout: EngineTrainingRollout }) {
  const question = rollout.prompt.filter((message) => message.role === 'user').at(-1)?.content ?? '';
  const replies = environmentReplies(rollout.completion);
  return (
    <li className="training-rollout" data-testid="training-rollout">
      <span className={`badge ${rollout.passed ? 'pass' : 'fail'}`}>{rollout.passed ? '✓' : '✗'}</span>
      <span className="reward">{rollout.reward.toFixed(2)}</span>
      <code className="question" title={`task ${rollout.taskIndex}`}>
        {question}
      </code>
      <span className="arrow">→</span>
      <span className="tokens">
        {rollout.turns.flatMap((turn, t) => {
          const tokens = turn.completionIds.map((id, i) => <TokenChip key={`${t}-${i}`} id={id} logprob={turn.completionLogprobs[i] ?? 0} text={turn.completionPieces[i] ?? ''} />);
          const score = rollout.turnRewards?.[t];
          return [
            // The rubric's score of this turn (turn rewards), which GRPO credits to this turn's tokens: glued
            // to the turn's last token in one unbreakable item, so a narrow row never wraps it away from its move.
            ...(score === undefined
              ? tokens
              : [
                  ...tokens.slice(0, -1),
                  <span key={`${t}-end`} className="turn-end">
                    {tokens.at(-1)}
                    <span className="turn-reward" data-testid="turn-reward" title="this turn's score (the rubric's turn rewards)">
                      {score.toFixed(2)}
                    </span>
                  </span>,
                ]),
            // Multi-turn: the environment's answer to this turn (a Wordle board), between the model's turns.
            ...(replies[t]
              ? [
                  <code key={`${t}-reply`} className="env-reply" data-testid="env-reply" title="the environment's reply">
                    {replies[t]}
                  </code>,
                ]
              : []),
          ];
        })}
      </span>
      {Object.entries(rollout.scores).map(([name, value]) => (
        <span key={name} className="chip">
          <code>{name}</code> {value.toFixed(2)}
        </span>
      ))}
      {rollout.errors.length > 0 && (
        <span className="badge error" title={rollout.errors.join('\n')}>
          !
        </span>
      )}
    </li>
  );
}

/** One generated token, coloured by its probability (red unlikely, green likely), its id and logprob in the tooltip. */
function TokenChip({ id, logprob, text }: { id: number; logprob: number; text: string }) {
  const probability = Math.exp(logprob);
  return (
    <span
      className="token"
      data-testid="token"
      style={{ background: `hsl(${(probability * 120).toFixed(0)}, 70%, 84%)` }}
      title={`token ${id}: ${JSON.stringify(text)} logprob ${logprob.toFixed(3)} (p ${probability.toFixed(3)})`}
    >
      {/* The engine decoded each token with the model's tokenizer; '' is part of a character the next token completes. */}
      {text === '' ? '·' : text.replace(/ /g, '␣').replace(/\n/g, '⏎')}
    </span>
  );
}

/** New run (set the open run aside; the next job starts from fresh weights) and the way to the stored runs. */
function RunBar({ onShowRuns }: { onShowRuns: () => void }) {
  const stored = usePlayground((state) => state.pastRuns.length);
  const busy = usePlayground(isTraining);
  return (
    <div className="run-list-bar">
      <button type="button" className="link" onClick={onShowRuns} data-testid="show-runs">
        {stored === 0 ? 'No stored runs yet' : `${stored} stored run${stored === 1 ? '' : 's'}`} — open, compare or delete them in the Runs tab
      </button>
      <button type="button" className="quiet" disabled={busy} onClick={newRun} data-testid="new-run">
        New run
      </button>
    </div>
  );
}
