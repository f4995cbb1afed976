/**
 * The judge panel: several judges score the same rollouts of the open environment (the Judge card's
 * model, the Policy card's, or endpoints given here), aggregated by mean, majority or unanimity and
 * lent to the environment as its one judge. Shows the panel's pairwise agreement and Fleiss' kappa,
 * how many judge replies gave no score on the prompt's scale (votes left out), each rollout's votes and agreement, and flags the rollouts where the judges split (they join the
 * review queue).
 */
import { PANEL_AGGREGATIONS, type PanelAggregation } from '../../../envs/studio/index.ts';
import { SegmentedChoice } from '../../kit/SegmentedChoice.tsx';
import { currentEnvironment } from '../environment/current-environment.ts';
import { usePlayground } from '../../store/index.ts';
import { addPanelJudge, cancelPanelEvaluation, removePanelJudge, setPanelAggregation, startPanelEvaluation, updatePanelJudge } from './judge-panel-actions.ts';
import { type PanelJudgeEntry } from './studio-slice.ts';

const AGGREGATION_LABELS: Record<PanelAggregation, string> = { mean: 'Mean score', majority: 'Majority', unanimous: 'Unanimous' };
const figure = (value: number | null) => (value === null ? 'n/a' : value.toFixed(3));

/** The judge panel card. */
export function JudgesPanel() {
  const judges = usePlayground((state) => state.studio.panelJudges);
  const aggregation = usePlayground((state) => state.studio.panelAggregation);
  const panel = usePlayground((state) => state.studio.judgePanel);
  const numTasks = usePlayground((state) => state.settings.numTasks);
  const rolloutsPerTask = usePlayground((state) => state.settings.rolloutsPerTask);
  const running = panel.status === 'running';
  const split = panel.rollouts.filter((rollout) => rollout.split).length;

  return (
    <>
      <section className="card" aria-labelledby="panel-heading">
        <h2 id="panel-heading">Judge panel</h2>
        <p className="hint">
          Several judges score the same rollouts; their votes (a score ≥ 0.5 is yes) become one reward by the rule chosen below. Where they split, no single judge can be trusted: those rollouts go to
          the review queue. The evaluation uses the Settings card&apos;s tasks ({numTasks}) and rollouts per task ({rolloutsPerTask}) against the Policy card&apos;s model.
        </p>
        <ol className="panel-judges" data-testid="panel-judges">
          {judges.map((judge, i) => (
            <li key={i} className="studio-row" data-testid="panel-judge">
              <select value={judge.source} data-testid="panel-judge-source" onChange={(event) => updatePanelJudge(i, { source: event.target.value as PanelJudgeEntry['source'] })}>
                <option value="judge">The judge (Judge card)</option>
                <option value="policy">The policy (Policy card)</option>
                <option value="endpoint">An endpoint</option>
              </select>
              {judge.source === 'endpoint' && (
                <>
                  <input
                    value={judge.baseURL}
                    placeholder="http://localhost:8000/v1"
                    aria-label="Base URL"
                    data-testid="panel-judge-url"
                    spellCheck={false}
                    onChange={(event) => updatePanelJudge(i, { baseURL: event.target.value })}
                  />
                  <input
                    value={judge.model}
                    placeholder="model"
                    aria-label="Model"
                    data-testid="panel-judge-model"
                    spellCheck={false}
                    onChange={(event) => updatePanelJudge(i, { model: event.target.value })}
                  />
                </>
              )}
              <button type="button" onClick={() => removePanelJudge(i)} disabled={running} data-testid="panel-judge-remove" aria-label={`Remove judge ${i + 1}`}>
                Remove
              </button>
            </li>
          ))}
        </ol>
        <p className="hint">Endpoints here are called without a key; for a keyed endpoint, set it in the Judge card and choose &quot;The judge&quot;.</p>
        <div className="studio-row">
          <button type="button" onClick={addPanelJudge} disabled={running} data-testid="panel-judge-add">
            Add a judge
          </button>
          <SegmentedChoice
            options={PANEL_AGGREGATIONS.map((value) => ({ value, label: AGGREGATION_LABELS[value] }))}
            value={aggregation}
            onChange={setPanelAggregation}
            label="How the panel's scores become one"
            testIdPrefix="panel-aggregation"
          />
        </div>
        <div className="studio-row">
          {running ? (
            <button type="button" onClick={cancelPanelEvaluation} data-testid="panel-cancel">
              Stop
            </button>
          ) : (
            <button type="button" className="primary" disabled={!currentEnvironment()} onClick={() => void startPanelEvaluation()} data-testid="panel-start">
              Evaluate with the panel
            </button>
          )}
        </div>
        {panel.error && (
          <p className="failure" role="alert" data-testid="panel-error">
            {panel.error}
          </p>
        )}
        {panel.calls > 0 && (
          <p className="summary-line" data-testid="panel-summary">
            <span className="chip">
              {panel.judges.length} judges, {AGGREGATION_LABELS[panel.aggregation].toLowerCase()}
            </span>
            <span className="chip">{panel.calls} calls</span>
            <span className="chip" data-testid="panel-pairwise">
              pairwise agreement {figure(panel.pairwise)}
            </span>
            <span className="chip" data-testid="panel-kappa">
              Fleiss&apos; kappa {figure(panel.fleissKappa)}
            </span>
            <span
              className={panel.offScale > 0 ? 'chip chip-bad' : 'chip'}
              data-testid="panel-off-scale"
              title="Judge replies with no score on the scale the judge prompt asks for (a grade outside it, say): each is a vote left out of its rollout's score and of the agreement."
            >
              {panel.offScale} {panel.offScale === 1 ? 'reply' : 'replies'} off the scale
            </span>
            <span className={split > 0 ? 'chip chip-bad' : 'chip'} data-testid="panel-split">
              split on {split}
            </span>
            {panel.unscored > 0 && <span className="chip chip-bad">{panel.unscored} calls without any score</span>}
          </p>
        )}
      </section>
      {panel.rollouts.length > 0 && (
        <section className="card" aria-labelledby="panel-rollouts-heading">
          <h2 id="panel-rollouts-heading">Rollouts and votes</h2>
          <div className="table-scroll">
            <table className="studio-table" data-testid="panel-rollouts">
              <thead>
                <tr>
                  <th>Rollout</th>
                  <th>Reward</th>
                  {panel.judges.map((name) => (
                    <th key={name} title={name}>
                      {name.replace(/ \(.*\)$/, '')}
                    </th>
                  ))}
                  <th>Agreement</th>
                  <th>Response</th>
                </tr>
              </thead>
              <tbody>
                {panel.rollouts.map((rollout) => (
                  <tr key={rollout.id} data-testid="panel-rollout" data-split={rollout.split} className={rollout.split ? 'split' : undefined}>
                    <td className="num">
                      {rollout.id}
                      {rollout.split && <span className="chip chip-bad">split</span>}
                    </td>
                    <td className="num">{rollout.reward.toFixed(2)}</td>
                    {panel.judges.map((name, j) => (
                      <td key={name} className="num">
                        {rollout.scores[j] === undefined || rollout.scores[j] === null ? '—' : rollout.scores[j]!.toFixed(2)}
                      </td>
                    ))}
                    <td className="num" data-testid="panel-rollout-agreement">
                      {figure(rollout.agreement)}
                    </td>
                    <td>{rollout.response.length > 160 ? `${rollout.response.slice(0, 160)}…` : rollout.response}</td>
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
