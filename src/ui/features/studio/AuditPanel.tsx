/**
 * The Audit panel: reward-hack checks over the last evaluation's rollouts or the training run's.
 * Cheap detectors run first; then the judge (Judge card; the offline heuristic judge by default)
 * reviews the top-scoring rollouts and a random sample. Flagged rollouts are listed with every
 * reason; from them the judge proposes yes/no criteria, which the person reviews and adds to the
 * environment as a criteria judge.
 */
import { useEffect, useState } from 'react';
import { SegmentedChoice } from '../../kit/SegmentedChoice.tsx';
import { usePlayground } from '../../store/index.ts';
import { addAcceptedCriteria, cancelAudit, proposeCriteriaFromAudit, startAudit, toggleCriterion } from './studio-actions.ts';
import { onTrainingRollouts, trainingRollouts } from '../training/training-rollouts.ts';

/** The audit card. */
export function AuditPanel({ onOpened }: { onOpened: () => void }) {
  const source = usePlayground((state) => state.studio.auditSource);
  const auditState = usePlayground((state) => state.studio.audit);
  const evaluated = usePlayground((state) => state.run.records.length);
  const [trained, setTrained] = useState(() => trainingRollouts().rollouts.length);
  useEffect(() => onTrainingRollouts(() => setTrained(trainingRollouts().rollouts.length)), []);
  const { result } = auditState;
  const running = auditState.status === 'running';

  return (
    <>
      <section className="card" aria-labelledby="audit-heading">
        <h2 id="audit-heading">Audit rewards</h2>
        <p className="hint">
          Did the rollouts earn their reward in the spirit of the task? Detectors look for a reward paid while a metric-only check fails, one completion for many tasks, a dominant reward, drifting
          length; then the judge (Judge card) reads the top-scoring rollouts and a random sample.
        </p>
        <SegmentedChoice
          options={[
            { value: 'evaluation', label: `Last evaluation (${evaluated})` },
            { value: 'training', label: `Training run (${trained})` },
          ]}
          value={source}
          onChange={(auditSource) => usePlayground.getState().setStudio({ auditSource })}
          label="Rollouts to audit"
          testIdPrefix="audit-source"
        />
        <div className="studio-row">
          {running ? (
            <button type="button" onClick={cancelAudit} data-testid="audit-cancel">
              Stop
            </button>
          ) : (
            <button type="button" className="primary" onClick={() => void startAudit()} data-testid="audit-start">
              Audit
            </button>
          )}
        </div>
        {auditState.error && (
          <p className="failure" role="alert" data-testid="audit-error">
            {auditState.error}
          </p>
        )}
        {result && (
          <p className="summary-line" data-testid="audit-summary">
            <span className="chip">{auditState.subject}</span>
            <span className={result.flagged.length > 0 ? 'chip chip-bad' : 'chip'}>{result.flagged.length} flagged</span>
            <span className="chip">{result.reviews.length} reviewed by the judge</span>
            <span className="chip">{result.findings.length} findings</span>
            {result.unrewarded > 0 && (
              <span className="chip" title="A reward of 0 has nothing to have earned: the judge does not review it and it is never flagged as not earned.">
                {result.unrewarded} with reward 0, not reviewed
              </span>
            )}
          </p>
        )}
      </section>
      {result && result.findings.length > 0 && (
        <section className="card" aria-labelledby="findings-heading">
          <h2 id="findings-heading">Findings</h2>
          <ul className="flag-reasons" data-testid="audit-findings">
            {result.findings.map((finding, i) => (
              <li key={i}>
                <b>{finding.detector}</b>: {finding.message}
              </li>
            ))}
          </ul>
          {result.detectorsSkipped.length > 0 && <p className="hint">Not run: {result.detectorsSkipped.map((skip) => `${skip.detector} (${skip.why})`).join('; ')}.</p>}
        </section>
      )}
      {result && (
        <section className="card" aria-labelledby="flagged-heading">
          <h2 id="flagged-heading">Flagged rollouts</h2>
          {result.flagged.length === 0 ? (
            <p className="hint" data-testid="audit-clean">
              Nothing flagged: no detector fired and the judge found every reviewed reward earned.
            </p>
          ) : (
            <div className="table-scroll">
              <table className="studio-table" data-testid="audit-flagged">
                <thead>
                  <tr>
                    <th>Rollout</th>
                    <th>Reward</th>
                    <th>Why</th>
                  </tr>
                </thead>
                <tbody>
                  {result.flagged.map((flag) => (
                    <tr key={flag.id} data-testid="audit-flag-row">
                      <td className="num">{flag.id}</td>
                      <td className="num">{flag.reward.toFixed(2)}</td>
                      <td>
                        <ul className="flag-reasons">
                          {flag.reasons.map((reason, i) => (
                            <li key={i}>{reason}</li>
                          ))}
                        </ul>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          {result.reviews.some((review) => !review.earned) && (
            <div className="studio-row">
              <button type="button" onClick={() => void proposeCriteriaFromAudit()} disabled={auditState.proposing} data-testid="criteria-propose">
                {auditState.proposing ? 'Asking the judge…' : 'Propose criteria from these'}
              </button>
            </div>
          )}
        </section>
      )}
      {auditState.proposed.length > 0 && (
        <section className="card" aria-labelledby="criteria-heading">
          <h2 id="criteria-heading">Proposed criteria</h2>
          <p className="hint">
            Yes/no questions a criteria judge asks of every rollout; each becomes its own metric (<code>criterion_name</code>). Keep the ones that say what the task really wants: they gate the reward
            (the file&apos;s own reward × the fraction of criteria met).
          </p>
          <ul className="criteria-list" data-testid="criteria-list">
            {auditState.proposed.map((item, i) => (
              <li key={item.criterion.name}>
                <label>
                  <input type="checkbox" checked={item.accepted} onChange={() => toggleCriterion(i)} data-testid="criterion-accept" /> <code>{item.criterion.name}</code> {item.criterion.question}
                </label>
              </li>
            ))}
          </ul>
          <div className="studio-row">
            <button
              type="button"
              className="primary"
              disabled={!auditState.proposed.some((item) => item.accepted)}
              data-testid="criteria-add"
              onClick={() => void addAcceptedCriteria().then((added) => added && onOpened())}
            >
              Add to the environment
            </button>
          </div>
          {auditState.criteriaNote && (
            <p className="hint" data-testid="criteria-note">
              {auditState.criteriaNote}
            </p>
          )}
          {auditState.criteriaSnippet && (
            <pre className="snippet" data-testid="criteria-snippet">
              {auditState.criteriaSnippet}
            </pre>
          )}
        </section>
      )}
    </>
  );
}
