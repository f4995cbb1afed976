/**
 * What a shared link opens: its code and settings, read-only, with a choice. Nothing from the link
 * runs until the person presses "Load and run" (or loads it and presses Evaluate later). A link that
 * would point an endpoint with a stored key elsewhere says so, and keeps the person's own endpoint
 * unless they tick the box.
 */
import { useState } from 'react';
import { startEvaluation } from '../evaluation/evaluation-actions.ts';
import { acceptReview, dismissReview, reviewEndpointChanges } from './share-actions.ts';
import { usePlayground } from '../../store/index.ts';
import { countOf } from '../../kit/result-text.ts';
import type { SharedState } from './url-state.ts';
import { fileSimulator } from './file-simulator.ts';

/** The link's tool simulator, for the settings line (nothing for the offline scripted one, or an older link without it); never a key, which links do not carry. */
function sharedSimulatorText(review: SharedState): string {
  if (review.simulatorKind === 'endpoint') return `, tool simulator: endpoint ${review.simulatorModel ?? ''} at ${review.simulatorBaseURL ?? ''}`;
  if (review.simulatorKind === 'judge') return ", tool simulator: the Judge card's model";
  if (review.simulatorKind === 'policy') return ", tool simulator: the Policy card's model";
  return '';
}

/** What loading an imported file changes: nothing, or the tool simulator its header names (a model a file cannot carry is named, and the person's own choice stays). */
function importedFileSettingsText(source: string): string {
  const simulator = fileSimulator(source);
  if (!simulator) return ' Loading it changes no setting.';
  const label = simulator.label.length > 200 ? `${simulator.label.slice(0, 200)}…` : simulator.label;
  if (!simulator.choice)
    return ` Its header says its tools were simulated by ${label}, which a file cannot carry: loading it keeps your tool simulator (Studio → Simulated tools), and changes no other setting.`;
  const which = simulator.choice.kind === 'endpoint' ? `endpoint ${simulator.choice.model} at ${simulator.choice.baseURL} (no key travels with a file)` : 'the offline scripted simulator';
  return ` Its header names the tool simulator it was made with, and loading it picks the same: ${which}. It changes no other setting.`;
}

/** The review overlay; renders nothing when no link awaits review. */
export function ReviewDialog() {
  const review = usePlayground((state) => state.review);
  const shareError = usePlayground((state) => state.shareError);
  const reviewFile = usePlayground((state) => state.reviewFile);
  const [useLinkEndpoints, setUseLinkEndpoints] = useState(false);
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
  const endpointChanges = reviewEndpointChanges();
  // The box is for this link only: the next one starts unticked.
  const load = () => acceptReview({ useLinkEndpoints }).finally(() => setUseLinkEndpoints(false));
  const dismiss = () => {
    setUseLinkEndpoints(false);
    dismissReview();
  };
  return (
    <div className="overlay" role="dialog" aria-modal="true" aria-labelledby="review-heading">
      <div className="dialog" data-testid="review">
        <h2 id="review-heading">{reviewFile ? `Review imported environment file “${reviewFile}”` : `Review shared environment “${review.name}”`}</h2>
        <p className="hint">
          {reviewFile ? 'This environment file comes from elsewhere.' : 'Someone shared this environment file.'} Read it before you run it: it will run in the sandbox (no network, no access to your
          keys), against the policy you choose.
          {reviewFile
            ? importedFileSettingsText(review.source)
            : ` Settings: ${countOf(review.evaluation.numTasks, 'task')} × ${countOf(review.evaluation.rolloutsPerTask, 'rollout')}, seed ${review.evaluation.seed}, temperature ${review.evaluation.temperature}, policy ${review.policy}${sharedSimulatorText(review)}.`}
        </p>
        {endpointChanges.length > 0 ? (
          <div className="warning" data-testid="review-endpoints">
            {endpointChanges.map((change) => (
              <p key={change.role}>
                This link points the {change.role === 'simulator' ? 'tool simulator' : change.role} endpoint at <code>{change.to}</code>; yours is <code>{change.from}</code>, and your stored API key
                goes to the endpoint in use.
              </p>
            ))}
            <label>
              <input type="checkbox" checked={useLinkEndpoints} onChange={(event) => setUseLinkEndpoints(event.target.checked)} data-testid="review-use-endpoints" /> Use the link’s endpoint
              {endpointChanges.length > 1 ? 's' : ''} (otherwise your own stay)
            </label>
          </div>
        ) : null}
        <pre className="review-code" data-testid="review-code">
          {lines.map((line, index) => (
            <div key={index}>
              <span className="line-number">{index + 1}</span>
              {line}
            </div>
          ))}
        </pre>
        <div className="row">
          <button type="button" className="quiet" onClick={dismiss} data-testid="review-dismiss">
            Don’t load
          </button>
          <button type="button" onClick={() => void load()} data-testid="review-load">
            Load into editor
          </button>
          <button type="button" className="primary" data-testid="review-run" onClick={() => void load().then(startEvaluation)}>
            Load and run
          </button>
        </div>
      </div>
    </div>
  );
}
