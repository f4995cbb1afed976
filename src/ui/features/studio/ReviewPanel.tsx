/**
 * The review queue: one ranked list of what most needs a person, built from this session's red
 * team, audit, judge panel, tool simulation and calibration (as `tabrl review build` ranks it). Accept or reject
 * writes back as `tabrl review` does: a confirmed hack becomes criteria gating the reward, a rejected
 * task leaves the environment (each opens the changed file; the tab stays on the queue, the note says which).
 */
import { usePlayground } from '../../store/index.ts';
import type { ReviewItem } from '../../../envs/studio/index.ts';
import { acceptReviewItem, buildStudioReviewQueue, rejectReviewItem } from './review-actions.ts';

const ACCEPT_LABEL: Record<ReviewItem['subject'], string> = { hack: 'Confirm hack', task: 'Keep task', tool: 'Trust tool' };
const REJECT_LABEL: Record<ReviewItem['subject'], string> = { hack: 'Dismiss', task: 'Remove task', tool: 'Distrust tool' };

/** The review queue card. */
export function ReviewPanel() {
  const review = usePlayground((state) => state.studio.review);
  const open = review.items.filter((item) => item.status === 'open').length;

  return (
    <section className="card" aria-labelledby="review-heading">
      <h2 id="review-heading">Review queue</h2>
      <p className="hint">
        Most urgent first: red-team back doors, rollouts the audit&apos;s judge says did not earn their reward, rollouts the judge panel split on, a high reward against a failed check, other audit
        flags, simulated tools of low fidelity, and learnable tasks at the edge of the calibration band. Accepting a hack turns it into a criterion that gates the reward; rejecting a task takes it out
        of the environment.
      </p>
      <div className="studio-row">
        <button type="button" className="primary" onClick={buildStudioReviewQueue} data-testid="review-build">
          {review.items.length > 0 ? 'Rebuild the queue' : 'Build the queue'}
        </button>
        {review.items.length > 0 && (
          <span className="chip" data-testid="review-count">
            {open} open of {review.items.length}
          </span>
        )}
      </div>
      {review.error && (
        <p className="failure" role="alert" data-testid="review-error">
          {review.error}
        </p>
      )}
      {review.note && (
        <p className="hint" data-testid="review-note">
          {review.note}
        </p>
      )}
      {review.items.length > 0 && (
        <div className="table-scroll">
          <table className="studio-table" data-testid="review-items">
            <thead>
              <tr>
                <th>#</th>
                <th>Kind</th>
                <th>What</th>
                <th>Why</th>
                <th>Decision</th>
              </tr>
            </thead>
            <tbody>
              {review.items.map((item) => (
                <tr key={item.id} data-testid="review-item" data-kind={item.kind} data-status={item.status} className={item.status === 'open' ? undefined : 'rejected'}>
                  <td className="num">{item.rank}</td>
                  <td>
                    <code>{item.kind}</code>
                  </td>
                  <td>
                    {item.question.length > 120 ? `${item.question.slice(0, 120)}…` : item.question}
                    {item.response !== undefined && <div className="hint">→ {item.response.length > 120 ? `${item.response.slice(0, 120)}…` : item.response}</div>}
                  </td>
                  <td>{item.why}</td>
                  <td>
                    {item.status === 'open' ? (
                      <div className="studio-row">
                        <button type="button" disabled={review.busy !== null} onClick={() => void acceptReviewItem(item.id)} data-testid="review-accept">
                          {ACCEPT_LABEL[item.subject]}
                        </button>
                        <button type="button" disabled={review.busy !== null} onClick={() => void rejectReviewItem(item.id)} data-testid="review-reject">
                          {REJECT_LABEL[item.subject]}
                        </button>
                      </div>
                    ) : (
                      <span data-testid="review-status">{item.status}</span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
