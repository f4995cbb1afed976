/** The run card: its three modes (Evaluate, Warm up, Train) with start / stop, progress with ETA, failures, and the evaluation summary. */
import { useEffect, useState } from 'react';
import { exportResults, pauseEvaluation, resumeEvaluation, startEvaluation, stopEvaluation } from './evaluation-actions.ts';
import { usePlayground } from '../../store/index.ts';
import { countOf, durationText, errorsLine } from '../../kit/result-text.ts';
import { SegmentedChoice, type SegmentedOption } from '../../kit/SegmentedChoice.tsx';
import { unfinishedJob, type RunMode } from '../training/training-slice.ts';
import { pauseTraining, resumeTraining, startTraining, startWarmup, stopTraining } from '../training/training-actions.ts';
import { isEvaluating, isTraining } from '../../store/selectors.ts';

const MODES: SegmentedOption<RunMode>[] = [
  { value: 'evaluate', label: 'Evaluate', help: 'Run the held-out tasks against the chosen policy.' },
  { value: 'warmup', label: 'Warm up', help: 'The teacher (the built-in expert, the endpoint or WebLLM) makes demonstrations; the in-tab model learns them (SFT).' },
  { value: 'train', label: 'Train', help: 'GRPO: the in-tab model samples G answers per task and learns from their rewards.' },
];

/** The run card. */
export function RunPanel({ onShowRollouts, onShowTraining }: { onShowRollouts: () => void; onShowTraining: () => void }) {
  const mode = usePlayground((state) => state.mode);
  const setMode = usePlayground((state) => state.setMode);
  const evaluating = usePlayground(isEvaluating);
  const training = usePlayground(isTraining);
  return (
    <section className="card run-card" aria-labelledby="run-heading">
      <h2 id="run-heading" className="visually-hidden">
        Run
      </h2>
      <SegmentedChoice options={MODES} value={mode} onChange={setMode} label="Mode" testIdPrefix="mode" disabled={evaluating || training} className="segmented modes" />
      <p className="hint">{MODES.find((item) => item.value === mode)?.help}</p>
      {mode === 'evaluate' ? <EvaluateSection onShowRollouts={onShowRollouts} /> : <TrainingSection mode={mode} onShowTraining={onShowTraining} />}
    </section>
  );
}

function EvaluateSection({ onShowRollouts }: { onShowRollouts: () => void }) {
  const status = usePlayground((state) => state.run.status);
  const paused = usePlayground((state) => state.run.pausedAt !== undefined);
  const problems = usePlayground((state) => state.problems.length);
  const training = usePlayground(isTraining);
  const running = status === 'running' || status === 'compiling' || status === 'stopping';
  return (
    <>
      <div className="run-bar">
        <span />
        {running ? (
          <span className="row">
            {status === 'running' && <PauseButton paused={paused} testId="pause" onPause={pauseEvaluation} onResume={resumeEvaluation} what="No new rollout starts; those under way finish." />}
            <button type="button" className="danger" data-testid="stop" disabled={status === 'stopping'} onClick={stopEvaluation}>
              {status === 'stopping' ? 'Stopping…' : 'Stop'}
            </button>
          </span>
        ) : (
          <button type="button" className="primary" data-testid="evaluate" disabled={training} onClick={() => void startEvaluation()}>
            Evaluate
          </button>
        )}
      </div>
      {problems > 0 && !running && (
        <p className="warning">
          The file has {problems} error{problems === 1 ? '' : 's'}; fix {problems === 1 ? 'it' : 'them'} to run.
        </p>
      )}
      <Progress />
      <Failure />
      <UnusedArgs />
      <Summary onShowRollouts={onShowRollouts} />
    </>
  );
}

function TrainingSection({ mode, onShowTraining }: { mode: 'warmup' | 'train'; onShowTraining: () => void }) {
  const job = usePlayground((state) => state.job);
  const engineError = usePlayground((state) => state.engine.error);
  const evaluating = usePlayground(isEvaluating);
  const running = isTraining({ job });
  // An unfinished job of this mode in the open run: the button continues it, with its settings.
  const pendingJob = usePlayground((state) => {
    const found = unfinishedJob(state.trainingRun);
    return found && found.phase === (mode === 'warmup' ? 'sft' : 'grpo') ? found : null;
  });
  const pending = pendingJob ? `${pendingJob.nextStep + 1} / ${pendingJob.options.steps}` : null;
  const runEnvironment = usePlayground((state) => state.trainingRun?.environment);
  const startLabel = pending ? `Continue ${mode === 'warmup' ? 'warm-up' : 'training'} (step ${pending})` : mode === 'warmup' ? 'Start warm-up' : 'Start training';
  const start = () => {
    onShowTraining();
    void (mode === 'warmup' ? startWarmup() : startTraining());
  };
  return (
    <>
      <div className="run-bar">
        <span className="muted">{mode === 'warmup' ? 'SFT warm-up of the in-tab model' : 'GRPO on the in-tab model'}</span>
        {running ? (
          <span className="row">
            {job.status === 'running' && (
              <PauseButton
                paused={job.pausedAt !== undefined}
                testId="pause-training"
                onPause={pauseTraining}
                onResume={resumeTraining}
                what="The job holds between steps (the GPU idles) and starts no new rollout; nothing is lost."
              />
            )}
            <button type="button" className="danger" data-testid="stop-training" disabled={job.status === 'stopping'} onClick={stopTraining}>
              {job.status === 'stopping' ? 'Stopping…' : 'Stop'}
            </button>
          </span>
        ) : (
          <button
            type="button"
            className="primary"
            data-testid="start-training"
            disabled={evaluating}
            onClick={start}
            title={pending ? 'Continues the open run\'s interrupted job from its checkpoint, with the settings it started with. "New run" in the Training tab starts over.' : undefined}
          >
            {startLabel}
          </button>
        )}
      </div>
      {pendingJob && !running && (
        <p className="hint" data-testid="continue-note">
          Continues the open run on <code>{runEnvironment}</code> with{' '}
          {pendingJob.environment ? <>its own code (from the file “{pendingJob.environment.label}”)</> : "the open file's code (this run was stored without its code; you will be asked)"}, arguments
          and settings ({pendingJob.options.steps} {pendingJob.phase === 'sft' ? 'SFT' : 'GRPO'} steps); the panel's settings and the open file apply to a new run (<b>New run</b> in the Training tab).
        </p>
      )}
      {running && <JobProgress />}
      {running && job.note && (
        <p className="warning" data-testid="training-note">
          {job.note}
        </p>
      )}
      {job.status === 'failed' && job.failure && (
        <p className="failure" role="alert" data-testid="training-failure">
          {job.failure}
        </p>
      )}
      {engineError && job.status !== 'failed' && (
        <p className="failure" role="alert" data-testid="training-engine-error">
          {engineError}
        </p>
      )}
      {job.status === 'done' && (
        <p className="hint" data-testid="training-done">
          {job.mode === 'warmup' ? 'Warm-up' : 'Training'} {job.phase}.{job.note ? ` ${job.note}` : ''}
        </p>
      )}
    </>
  );
}

function PauseButton({ paused, testId, what, onPause, onResume }: { paused: boolean; testId: string; what: string; onPause: () => void; onResume: () => void }) {
  return paused ? (
    <button type="button" className="primary" data-testid={`${testId.replace('pause', 'resume')}`} onClick={onResume}>
      Resume
    </button>
  ) : (
    <button type="button" data-testid={testId} title={`Pause: ${what} Resume goes on where it held; Stop still works.`} onClick={onPause}>
      Pause
    </button>
  );
}

function JobProgress() {
  const job = usePlayground((state) => state.job);
  const [clock, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 250);
    return () => clearInterval(timer);
  }, []);
  // While paused the clocks stand still (resuming shifts the start times by the pause).
  const now = job.pausedAt ?? clock;
  const fraction = job.total > 0 ? job.done / job.total : 0;
  const elapsed = (now - job.startedAt) / 1000;
  const phaseElapsed = (now - job.phaseStartedAt) / 1000;
  const doneInPhase = job.done - (job.doneAtPhaseStart ?? 0);
  const eta = doneInPhase > 0 ? (phaseElapsed / doneInPhase) * (job.total - job.done) : undefined;
  const unit = job.phase === 'making demonstrations' ? 'rollout' : 'step';
  return (
    <div className="progress" data-testid="training-progress">
      <div className="progress-track" role="progressbar" aria-valuemin={0} aria-valuemax={job.total} aria-valuenow={job.done}>
        <div className="progress-fill" style={{ width: `${(fraction * 100).toFixed(1)}%` }} />
      </div>
      <div className="progress-text">
        {job.status === 'stopping' ? 'Stopping…' : `${job.phase}${job.total > 0 ? `: ${job.done} / ${countOf(job.total, unit)}` : '…'}`}
        <span data-testid="training-eta">
          {job.pausedAt !== undefined
            ? `paused · ${((job.pausedAt - job.startedAt) / 1000).toFixed(0)} s elapsed`
            : `${elapsed.toFixed(0)} s elapsed${eta !== undefined ? ` · ETA ${durationText(eta)}` : ''}`}
        </span>
      </div>
    </div>
  );
}

function Progress() {
  const status = usePlayground((state) => state.run.status);
  const done = usePlayground((state) => state.run.done);
  const total = usePlayground((state) => state.run.total);
  const startedAt = usePlayground((state) => state.run.startedAt);
  const name = usePlayground((state) => state.run.environment?.name);
  const pausedAt = usePlayground((state) => state.run.pausedAt);
  const [clock, setNow] = useState(Date.now());
  const now = pausedAt ?? clock;
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
        {status === 'compiling' ? 'Compiling…' : `${name ?? 'Environment'}: ${done} / ${countOf(total, 'rollout')}`}
        <span data-testid="evaluation-eta">
          {pausedAt !== undefined ? 'paused · ' : ''}
          {elapsed.toFixed(0)} s elapsed{pausedAt === undefined && eta !== undefined ? ` · ETA ${durationText(eta)}` : ''}
        </span>
      </div>
    </div>
  );
}

/** Argument keys the evaluated file never read (a typo, or another file's arguments), as tabrl eval warns about them. */
function UnusedArgs() {
  const warnings = usePlayground((state) => state.run.environment?.unusedArgWarnings);
  if (!warnings?.length) return null;
  return (
    <p className="warning" data-testid="unused-args">
      {warnings.map((warning) => `${warning}.`).join(' ')} {warnings.length === 1 ? 'It was' : 'They were'} ignored; fix the environment arguments under Settings.
    </p>
  );
}

function Failure() {
  const failure = usePlayground((state) => state.run.failure);
  if (!failure) return null;
  return (
    <p className="failure" role="alert" data-testid="run-failure">
      {failure}
    </p>
  );
}

const percent = (value: number) => `${(value * 100).toFixed(1)}%`;
const fixed = (value: number) => value.toFixed(3);

function Summary({ onShowRollouts }: { onShowRollouts: () => void }) {
  const summary = usePlayground((state) => state.run.summary);
  const stoppedEarly = usePlayground((state) => state.run.stoppedEarly);
  const failed = usePlayground((state) => state.run.status === 'failed');
  const environment = usePlayground((state) => state.run.environment);
  const wallMs = usePlayground((state) => (state.run.finishedAt ? state.run.finishedAt - state.run.startedAt : null));
  const simulator = usePlayground((state) => state.run.simulator);
  if (!summary) return null;
  const simulatedTools = (environment?.tools?.length ?? 0) > 0;
  const weights = new Map(environment?.rewardNames.map((name, index) => [name, environment.rewardWeights[index] ?? 0]) ?? []);
  return (
    <div className="summary" data-testid="summary">
      <div className="headline">
        <div className="metric">
          <span className="metric-value" data-testid="reward-mean">
            {fixed(summary.reward.mean)}
            <small> ± {fixed(summary.reward.std)}</small>
          </span>
          <span className="metric-label">reward</span>
        </div>
        <div className="metric">
          <span className="metric-value" data-testid="pass-rate">
            {percent(summary.passRate)}
          </span>
          <span className="metric-label">pass rate</span>
        </div>
        <div className="metric">
          <span className="metric-value">{summary.numRollouts}</span>
          <span className="metric-label">rollouts · {summary.numTasks} tasks</span>
        </div>
      </div>
      {failed && (
        <p className="warning" data-testid="summary-not-measured">
          The run failed (see above): these numbers are kept to debug it, not as a measurement.
        </p>
      )}
      {stoppedEarly && <p className="warning">Stopped early: {stoppedEarly}</p>}
      <table className="scores">
        <thead>
          <tr>
            <th>Reward function</th>
            <th>weight</th>
            <th>mean</th>
          </tr>
        </thead>
        <tbody>
          {Object.entries(summary.scores).map(([name, value]) => (
            <tr key={name}>
              <td>
                <code>{name}</code>
              </td>
              <td>{weights.has(name) ? weights.get(name) : '—'}</td>
              <td>{fixed(value)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p className="summary-line">
        {Object.entries(summary.passAtK).map(([k, value]) => (
          <span key={k} className="chip">
            pass@{k} {percent(value)}
          </span>
        ))}
        <span className={`chip ${summary.rolloutsWithErrors > 0 ? 'chip-bad' : ''}`} data-testid="error-count">
          {errorsLine(summary.rolloutsWithErrors, summary.errorsBySource)}
        </span>
        {summary.truncated > 0 && <span className="chip">{summary.truncated} truncated</span>}
        {wallMs !== null && <span className="chip">{(wallMs / 1000).toFixed(1)} s</span>}
        {(simulator !== undefined || simulatedTools) && (
          <span className="chip" data-testid="run-simulator" title="The tool simulator lent to the environment as args.simulatorClient (Studio → Simulated tools)">
            simulator: {simulator ?? 'none lent (the file’s own)'}
          </span>
        )}
      </p>
      <div className="row">
        <button type="button" data-testid="show-rollouts" onClick={onShowRollouts}>
          View rollouts
        </button>
        <button type="button" className="quiet" data-testid="export" onClick={exportResults}>
          Export JSONL
        </button>
      </div>
    </div>
  );
}
