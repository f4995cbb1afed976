/** The run bar (Evaluate / Stop, progress with ETA, failures) and the results summary. */
import { useEffect, useState } from 'react';
import { exportResults, startEvaluation, stopEvaluation } from '../actions.ts';
import { usePlayground } from '../store/index.ts';

/** The run card. */
export function RunPanel({ onShowRollouts }: { onShowRollouts: () => void }) {
  const status = usePlayground((state) => state.run.status);
  const problems = usePlayground((state) => state.problems.length);
  const policy = usePlayground((state) => state.policy);
  const running = status === 'running' || status === 'compiling' || status === 'stopping';
  return (
    <section className="card run-card" aria-labelledby="run-heading">
      <div className="run-bar">
        <h2 id="run-heading">Evaluate</h2>
        {running
          ? <button type="button" className="danger" data-testid="stop" disabled={status === 'stopping'} onClick={stopEvaluation}>{status === 'stopping' ? 'Stopping…' : 'Stop'}</button>
          : <button type="button" className="primary" data-testid="evaluate" disabled={policy === 'in-tab'} onClick={() => void startEvaluation()}>Evaluate</button>}
      </div>
      {problems > 0 && !running && <p className="warning">The file has {problems} error{problems === 1 ? '' : 's'}; fix {problems === 1 ? 'it' : 'them'} to run.</p>}
      <Progress />
      <Failure />
      <Summary onShowRollouts={onShowRollouts} />
    </section>
  );
}

function Progress() {
  const status = usePlayground((state) => state.run.status);
  const done = usePlayground((state) => state.run.done);
  const total = usePlayground((state) => state.run.total);
  const startedAt = usePlayground((state) => state.run.startedAt);
  const name = usePlayground((state) => state.run.environment?.name);
  const [now, setNow] = useState(Date.now());
  const active = status === 'running' || status === 'stopping' || status === 'compiling';
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => setNow(Date.now()), 250);
    return () => clearInterval(timer);
  }, [active]);
  if (!active) return null;
  const fraction = total > 0 ? done / total : 0;
  const elapsed = (now - startedAt) / 1000;
  const eta = done > 0 ? (elapsed / done) * (total - done) : undefined;
  return (
    <div className="progress" data-testid="progress">
      <div className="progress-track" role="progressbar" aria-valuemin={0} aria-valuemax={total} aria-valuenow={done}>
        <div className="progress-fill" style={{ width: `${(fraction * 100).toFixed(1)}%` }} />
      </div>
      <div className="progress-text">
        {status === 'compiling' ? 'Compiling…' : `${name ?? 'Environment'}: ${done} / ${total} rollouts`}
        <span>{elapsed.toFixed(0)} s elapsed{eta !== undefined ? ` · ETA ${formatSeconds(eta)}` : ''}</span>
      </div>
    </div>
  );
}

function formatSeconds(seconds: number): string {
  return seconds < 60 ? `${Math.ceil(seconds)} s` : `${Math.floor(seconds / 60)} min ${Math.ceil(seconds % 60)} s`;
}

function Failure() {
  const failure = usePlayground((state) => state.run.failure);
  if (!failure) return null;
  return <p className="failure" role="alert" data-testid="run-failure">{failure}</p>;
}

const percent = (value: number) => `${(value * 100).toFixed(1)}%`;
const fixed = (value: number) => value.toFixed(3);

function Summary({ onShowRollouts }: { onShowRollouts: () => void }) {
  const summary = usePlayground((state) => state.run.summary);
  const stoppedEarly = usePlayground((state) => state.run.stoppedEarly);
  const environment = usePlayground((state) => state.run.environment);
  const wallMs = usePlayground((state) => (state.run.finishedAt ? state.run.finishedAt - state.run.startedAt : null));
  if (!summary) return null;
  const weights = new Map(environment?.rewardNames.map((name, index) => [name, environment.rewardWeights[index] ?? 0]) ?? []);
  const errors = Object.entries(summary.errorsBySource);
  return (
    <div className="summary" data-testid="summary">
      <div className="headline">
        <div className="metric"><span className="metric-value" data-testid="reward-mean">{fixed(summary.reward.mean)}<small> ± {fixed(summary.reward.std)}</small></span><span className="metric-label">reward</span></div>
        <div className="metric"><span className="metric-value" data-testid="pass-rate">{percent(summary.passRate)}</span><span className="metric-label">pass rate</span></div>
        <div className="metric"><span className="metric-value">{summary.numRollouts}</span><span className="metric-label">rollouts · {summary.numTasks} tasks</span></div>
      </div>
      {stoppedEarly && <p className="warning">Stopped early: {stoppedEarly}</p>}
      <table className="scores">
        <thead><tr><th>Reward function</th><th>weight</th><th>mean</th></tr></thead>
        <tbody>
          {Object.entries(summary.scores).map(([name, value]) => (
            <tr key={name}><td><code>{name}</code></td><td>{weights.has(name) ? weights.get(name) : '—'}</td><td>{fixed(value)}</td></tr>
          ))}
        </tbody>
      </table>
      <p className="summary-line">
        {Object.entries(summary.passAtK).map(([k, value]) => <span key={k} className="chip">pass@{k} {percent(value)}</span>)}
        <span className={`chip ${summary.rolloutsWithErrors > 0 ? 'chip-bad' : ''}`} data-testid="error-count">
          {summary.rolloutsWithErrors} with errors{errors.length > 0 ? ` (${errors.map(([source, count]) => `${source} ${count}`).join(', ')})` : ''}
        </span>
        {summary.truncated > 0 && <span className="chip">{summary.truncated} truncated</span>}
        {wallMs !== null && <span className="chip">{(wallMs / 1000).toFixed(1)} s</span>}
      </p>
      <div className="row">
        <button type="button" data-testid="show-rollouts" onClick={onShowRollouts}>View rollouts</button>
        <button type="button" className="quiet" data-testid="export" onClick={exportResults}>Export JSONL</button>
      </div>
    </div>
  );
}
