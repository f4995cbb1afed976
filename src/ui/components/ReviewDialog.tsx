/**
 * What a shared link opens: its code and settings, read-only, with a choice. Nothing from the link
 * runs until the person presses "Load and run" (or loads it and presses Evaluate later).
 */
import { acceptReview, dismissReview, startEvaluation } from '../actions.ts';
import { usePlayground } from '../store/index.ts';

/** The review overlay; renders nothing when no link awaits review. */
export function ReviewDialog() {
  const review = usePlayground((state) => state.review);
  const shareError = usePlayground((state) => state.shareError);
  const reviewFile = usePlayground((state) => state.reviewFile);
  if (shareError) {
    return (
      <div className="overlay" role="dialog" aria-modal="true" aria-labelledby="share-error-heading">
        <div className="dialog small">
          <h2 id="share-error-heading">This link could not be opened</h2>
          <p data-testid="share-error">{shareError}</p>
          <div className="row">
            <button type="button" onClick={dismissReview}>
              Close
            </button>
          </div>
        </div>
      </div>
    );
  }
  if (!review) return null;
  const lines = review.source.split('\n');
  return (
    <div className="overlay" role="dialog" aria-modal="true" aria-labelledby="review-heading">
      <div className="dialog" data-testid="review">
        <h2 id="review-heading">{reviewFile ? `Review imported environment file “${reviewFile}”` : `Review shared environment “${review.name}”`}</h2>
        <p className="hint">
          {reviewFile ? 'This environment file comes from elsewhere.' : 'Someone shared this environment file.'} Read it before you run it: it will run in the sandbox (no network, no access to your
          keys), against the policy you choose.
          {reviewFile
            ? ' Loading it changes no setting.'
            : ` Settings: ${review.evaluation.numTasks} tasks × ${review.evaluation.rolloutsPerTask} rollouts, seed ${review.evaluation.seed}, temperature ${review.evaluation.temperature}, policy ${review.policy}.`}
        </p>
        <pre className="review-code" data-testid="review-code">
          {lines.map((line, index) => (
            <div key={index}>
              <span className="line-number">{index + 1}</span>
              {line}
            </div>
          ))}
        </pre>
        <div className="row">
          <button type="button" className="quiet" onClick={dismissReview} data-testid="review-dismiss">
            Don’t load
          </button>
          <button type="button" onClick={() => void acceptReview()} data-testid="review-load">
            Load into editor
          </button>
          <button type="button" className="primary" data-testid="review-run" onClick={() => void acceptReview().then(startEvaluation)}>
            Load and run
          </button>
        </div>
      </div>
    </div>
  );
}
