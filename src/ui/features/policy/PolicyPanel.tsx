/** The policy picker: the built-in's scripted expert, an OpenAI-compatible endpoint, the in-tab model (tiny, trained from scratch in the engine worker), or a WebLLM model (WebLLMFields). */
import { choosePolicy, setApiKey, setEndpoint } from './policy-actions.ts';
import { readApiKey } from '../models/api-key.ts';
import { isBuiltinName } from '../environment/builtins.ts';
import { usePlayground } from '../../store/index.ts';
import type { PolicyKind } from './policy-slice.ts';
import { EndpointFields } from '../../kit/EndpointFields.tsx';
import { ModelPicker } from './ModelPicker.tsx';
import { SegmentedChoice, type SegmentedOption } from '../../kit/SegmentedChoice.tsx';
import { WebLLMFields } from '../models/WebLLMFields.tsx';

const POLICIES: SegmentedOption<PolicyKind>[] = [
  { value: 'expert', label: 'Scripted expert' },
  { value: 'endpoint', label: 'OpenAI-compatible endpoint' },
  { value: 'in-tab', label: 'In-tab model' },
  { value: 'webllm', label: 'WebLLM model' },
];

/** The policy card. */
export function PolicyPanel() {
  const policy = usePlayground((state) => state.policy);
  const builtin = usePlayground((state) => state.environments.find((item) => item.id === state.currentId)?.builtin);
  const hasExpert = isBuiltinName(builtin);

  return (
    <section className="card" aria-labelledby="policy-heading">
      <h2 id="policy-heading">Policy</h2>
      <SegmentedChoice
        options={
          hasExpert ? POLICIES : POLICIES.map((option) => (option.value === 'expert' ? { ...option, unavailable: 'This file did not start from a built-in, so it has no scripted expert.' } : option))
        }
        value={policy}
        onChange={choosePolicy}
        label="Policy"
        testIdPrefix="policy"
      />
      {policy === 'expert' && (
        <p className="hint">
          {hasExpert ? (
            <>
              The built-in <b>{builtin}</b> expert answers every task offline — a quick check that the rewards score a good answer high.
            </>
          ) : (
            <>This file did not start from a built-in, so it has no expert. Choose the in-tab model (offline), a WebLLM model or an endpoint.</>
          )}
        </p>
      )}
      {policy === 'endpoint' && <PolicyEndpointFields />}
      {policy === 'in-tab' && (
        <>
          <ModelPicker />
          <EngineStatus />
        </>
      )}
      {policy === 'webllm' && <WebLLMFields />}
    </section>
  );
}

function EngineStatus() {
  const engine = usePlayground((state) => state.engine);
  const run = usePlayground((state) => state.trainingRun);
  if (engine.status === 'failed')
    return (
      <p className="failure" role="alert" data-testid="engine-error">
        {engine.error}
      </p>
    );
  return (
    <p className="hint" data-testid="engine-status">
      {engine.status === 'ready' && engine.info ? (
        engine.info.model !== 'tiny' ? (
          <>
            <b>{engine.info.modelName ?? engine.info.model}</b>, {engine.info.parameters.toLocaleString()} parameters
            {engine.info.loraRank ? (
              <>
                {' '}
                (LoRA rank {engine.info.loraRank}: {(engine.info.trainableParameters ?? 0).toLocaleString()} trainable)
              </>
            ) : (
              ' (full fine-tuning)'
            )}
            , on <b data-testid="engine-device">{engine.info.adapter}</b>
            {run && run.model === engine.info.model ? (
              <>
                , with the weights of the run on <code>{run.environment}</code> ({run.sft.length} SFT + {run.grpo.length} GRPO steps).
              </>
            ) : (
              '.'
            )}
          </>
        ) : (
          <>
            A {engine.info.parameters.toLocaleString()}-parameter model over bytes, on <b data-testid="engine-device">{engine.info.adapter}</b>,{' '}
            {run ? (
              <>
                with the weights of the run on <code>{run.environment}</code> ({run.sft.length} SFT + {run.grpo.length} GRPO steps).
              </>
            ) : (
              <>untrained (random weights): warm it up first.</>
            )}
          </>
        )
      ) : (
        'Starting the engine…'
      )}
      {engine.status === 'ready' && engine.info?.fallback ? <span data-testid="engine-fallback"> {engine.info.fallback}</span> : null}
    </p>
  );
}

function PolicyEndpointFields() {
  const baseURL = usePlayground((state) => state.baseURL);
  const model = usePlayground((state) => state.model);
  const hasApiKey = usePlayground((state) => state.hasApiKey);
  return (
    <EndpointFields
      baseURL={baseURL}
      model={model}
      hasApiKey={hasApiKey}
      readApiKey={readApiKey}
      onEndpointChange={setEndpoint}
      onApiKeyChange={setApiKey}
      testIdPrefix="endpoint"
      hint="The key stays in this browser's local storage. It is sent only to this URL, never into the sandbox or a share link."
    />
  );
}
