/**
 * The Judge card: where an environment's judge verdicts come from, chosen like the policy. The
 * chosen judge is lent to the environment as `args.judgeClient` (with `args.judgeModel`); its
 * calls come back out of the sandbox to this page, so a key stays here.
 */
import { EndpointFields } from '../../kit/EndpointFields.tsx';
import { SegmentedChoice, type SegmentedOption } from '../../kit/SegmentedChoice.tsx';
import { WebLLMFields } from '../models/WebLLMFields.tsx';
import { usePlayground } from '../../store/index.ts';
import { chooseJudge, setJudgeApiKey, setJudgeEndpoint } from './judge-actions.ts';
import { readJudgeApiKey } from './judge-key.ts';
import type { JudgeKind } from './judge-slice.ts';

const OPTIONS: SegmentedOption<JudgeKind>[] = [
  { value: 'heuristic', label: 'Offline heuristic' },
  { value: 'endpoint', label: 'OpenAI-compatible endpoint' },
  { value: 'in-tab', label: 'In-tab model' },
  { value: 'webllm', label: 'WebLLM model' },
];

/** The judge card. */
export function JudgePanel() {
  const kind = usePlayground((state) => state.judge.kind);
  const policy = usePlayground((state) => state.policy);
  return (
    <section className="card" aria-labelledby="judge-heading" data-testid="judge-panel">
      <h2 id="judge-heading">Judge</h2>
      <SegmentedChoice options={OPTIONS} value={kind} onChange={chooseJudge} label="Judge" testIdPrefix="judge" />
      {kind === 'heuristic' && (
        <p className="hint" data-testid="judge-hint">
          No model judges: each environment uses its own offline stand-in (judged-writing checks the constraints; lesson 4's judge is a gullible rule). Environments that need a judge get it as{' '}
          <code>args.judgeClient</code> when you pick one here.
        </p>
      )}
      {kind === 'endpoint' && <JudgeEndpointFields />}
      {kind === 'in-tab' && (
        <p className="hint" data-testid="judge-hint">
          The in-tab model, as it is now, grades the rollouts. It is small: expect a weak judge.
        </p>
      )}
      {kind === 'webllm' &&
        (policy === 'webllm' ? (
          <p className="hint" data-testid="judge-hint">
            The WebLLM model picked for the policy judges too (one WebLLM model is loaded at a time).
          </p>
        ) : (
          <WebLLMFields />
        ))}
    </section>
  );
}

function JudgeEndpointFields() {
  const baseURL = usePlayground((state) => state.judge.baseURL);
  const model = usePlayground((state) => state.judge.model);
  const hasApiKey = usePlayground((state) => state.judge.hasApiKey);
  return (
    <EndpointFields
      baseURL={baseURL}
      model={model}
      hasApiKey={hasApiKey}
      readApiKey={readJudgeApiKey}
      onEndpointChange={setJudgeEndpoint}
      onApiKeyChange={setJudgeApiKey}
      testIdPrefix="judge"
      hint="The judge's key stays in this browser's local storage and is sent only to this URL. The environment gets a judge whose calls come back to this page: the key never enters the sandbox."
    />
  );
}
