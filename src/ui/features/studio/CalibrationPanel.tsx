/**
 * Calibration of the open environment: K rollouts of each training task against the Policy card's
 * model, in a fresh sandbox; per task the pass rate, reward mean and std, learnability 4p(1−p) and
 * a label for the keep band; a histogram of pass rates; "Use learnable tasks" opens a file over the
 * learnable ones only.
 */
import type { TaskCalibration } from '../../../envs/studio/index.ts';
import { currentEnvironment } from '../environment/current-environment.ts';
import { countOf } from '../../kit/result-text.ts';
import { usePlayground } from '../../store/index.ts';
import { cancelCalibration, setKeepBand, startCalibration, openLearnableTasks } from './studio-actions.ts';

const BINS = 10;

/** The calibration card. */
export function CalibrationPanel({ onOpened }: { onOpened: () => void }) {
  const calibration = usePlayground((state) => state.studio.calibration);
  const k = usePlayground((state) => state.studio.calibrationK);
  const numTasks = usePlayground((state) => state.studio.calibrationTasks);
  const keep = usePlayground((state) => state.studio.keep);
  const policy = usePlayground((state) => state.studio.calibrationPolicy);
  const environmentName = usePlayground((state) => state.environments.find((item) => item.id === state.currentId)?.name);
  const running = calibration.status === 'running';
  const counts = { 'too-hard': 0, learnable: 0, 'too-easy': 0 };
  for (const task of calibration.tasks) counts[task.label] += 1;

  return (
    <>
      <section className="card" aria-labelledby="calibration-heading">
        <h2 id="calibration-heading">Calibrate {environmentName ? <code>{environmentName}</code> : null}</h2>
        <p className="hint">
          Each training task is rolled out K times by the policy (at least temperature 0.7). A task it always passes teaches nothing, nor does one it never passes: GRPO learns from the tasks in
          between. The scripted student is an offline rule for generated files: it always knows numbers, knows names half the time, and nothing else.
        </p>
        <div className="studio-row">
          <label>
            Policy
            <select value={policy} data-testid="calibration-policy" onChange={(event) => usePlayground.getState().setStudio({ calibrationPolicy: event.target.value as 'policy' | 'student' })}>
              <option value="policy">The policy (Policy card)</option>
              <option value="student">Scripted student (offline)</option>
            </select>
          </label>
          <label>
            Tasks
            <input
              type="number"
              min={1}
              max={10000}
              value={numTasks}
              data-testid="calibration-tasks"
              onChange={(event) => usePlayground.getState().setStudio({ calibrationTasks: Math.max(1, Number(event.target.value) || 1) })}
            />
          </label>
          <label>
            K rollouts
            <input
              type="number"
              min={2}
              max={64}
              value={k}
              data-testid="calibration-k"
              onChange={(event) => usePlayground.getState().setStudio({ calibrationK: Math.max(2, Number(event.target.value) || 2) })}
            />
          </label>
          <label>
            Keep pass rates from
            <input type="number" min={0} max={1} step={0.05} value={keep[0]} data-testid="keep-lo" onChange={(event) => setKeepBand([Number(event.target.value), keep[1]])} />
          </label>
          <label>
            below
            <input type="number" min={0} max={1} step={0.05} value={keep[1]} data-testid="keep-hi" onChange={(event) => setKeepBand([keep[0], Number(event.target.value)])} />
          </label>
        </div>
        <div className="studio-row">
          {running ? (
            <button type="button" onClick={cancelCalibration} data-testid="calibration-cancel">
              Stop
            </button>
          ) : (
            <button type="button" className="primary" disabled={!currentEnvironment()} onClick={() => void startCalibration()} data-testid="calibration-start">
              Calibrate
            </button>
          )}
          {counts.learnable > 0 && !running && (
            <button type="button" onClick={() => void openLearnableTasks().then((opened) => opened && onOpened())} data-testid="calibration-use">
              Use learnable tasks ({counts.learnable})
            </button>
          )}
        </div>
        {(running || calibration.done > 0) && (
          <p className="hint" data-testid="calibration-progress">
            {calibration.done} of {countOf(calibration.total, 'rollout')}
            {calibration.environment ? ` of ${calibration.environment}` : ''}
            {calibration.status === 'cancelled' ? ' · stopped' : ''}
          </p>
        )}
        {calibration.error && (
          <p className="failure" role="alert" data-testid="calibration-error">
            {calibration.error}
          </p>
        )}
        {calibration.tasks.length > 0 && (
          <>
            <p className="summary-line" data-testid="calibration-counts">
              <span className="chip">too hard {counts['too-hard']}</span>
              <span className="chip">learnable {counts.learnable}</span>
              <span className="chip">too easy {counts['too-easy']}</span>
            </p>
            <Histogram tasks={calibration.tasks} keep={keep} />
          </>
        )}
      </section>
      {calibration.tasks.length > 0 && (
        <section className="card" aria-labelledby="calibrated-heading">
          <h2 id="calibrated-heading">Tasks</h2>
          <div className="table-scroll">
            <table className="studio-table" data-testid="calibration-table">
              <thead>
                <tr>
                  <th>#</th>
                  <th>Question</th>
                  <th>Pass rate</th>
                  <th>Reward</th>
                  <th>Learnability</th>
                  <th>Label</th>
                </tr>
              </thead>
              <tbody>
                {calibration.tasks.map((task) => (
                  <tr key={task.taskIndex} data-testid="calibration-row" data-label={task.label}>
                    <td className="num">{task.taskIndex}</td>
                    <td>{task.question}</td>
                    <td className="num">{Math.round(task.passRate * 100)}%</td>
                    <td className="num">
                      {task.rewardMean.toFixed(2)} ± {task.rewardStd.toFixed(2)}
                    </td>
                    <td className="num">{task.learnability.toFixed(2)}</td>
                    <td>
                      <span className={task.label === 'learnable' ? 'badge pass' : 'badge fail'}>{task.label}</span>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      )}
    </>
  );
}

/** Pass rates in ten bins over [0, 1]; bins outside the keep band are grey. */
function Histogram({ tasks, keep }: { tasks: readonly TaskCalibration[]; keep: [number, number] }) {
  const counts = new Array<number>(BINS).fill(0);
  for (const task of tasks) counts[Math.min(BINS - 1, Math.floor(task.passRate * BINS))]! += 1;
  const most = Math.max(1, ...counts);
  return (
    <figure className="chart" aria-label="Histogram of pass rates" data-testid="calibration-histogram">
      <figcaption>Pass rate per task</figcaption>
      <div className="histogram">
        {counts.map((count, i) => {
          const low = i / BINS;
          const inside = low + 1 / BINS > keep[0] && low < keep[1];
          return (
            <div key={i} className="histogram-bar" title={`${low.toFixed(1)}–${(low + 1 / BINS).toFixed(1)}: ${count} tasks`}>
              <span>{count > 0 ? count : ''}</span>
              <div className={inside ? 'histogram-fill' : 'histogram-fill out'} style={{ height: `${(count / most) * 100}%` }} />
            </div>
          );
        })}
      </div>
      <div className="histogram-axis">
        <span>0</span>
        <span>0.5</span>
        <span>1</span>
      </div>
    </figure>
  );
}
