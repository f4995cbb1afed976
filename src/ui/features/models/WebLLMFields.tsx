/**
 * The WebLLM policy's fields: a prebuilt model (name and GPU memory), whether it is in the browser
 * cache, a Load button with a progress bar, errors, and guidance when this browser has no WebGPU,
 * lacks a feature the model needs, or seems short of memory. WebLLM only evaluates and teaches; it
 * never trains.
 */
import { useEffect, useState } from 'react';
import { formatMB, modelFitProblems, type GpuFacts, type WebLLMModelInfo } from '../../../workers/webllm-client.ts';
import { usePlayground } from '../../store/index.ts';
import { chooseWebLLMModel, deleteWebLLMModel, loadWebLLMModel, probeGpu, webllmModelCached, webllmModels } from './webllm-actions.ts';
import { errorMessage } from '../../../common/error-message.ts';

/** The WebLLM fields of the policy card. */
export function WebLLMFields() {
  const modelId = usePlayground((state) => state.webllmModel);
  const webllm = usePlayground((state) => state.webllm);
  const [models, setModels] = useState<WebLLMModelInfo[] | null>(null);
  const [listError, setListError] = useState<string | null>(null);
  const [gpu, setGpu] = useState<GpuFacts | null>(null);
  const [cached, setCached] = useState<boolean | null>(null);
  const [cacheVersion, setCacheVersion] = useState(0);

  useEffect(() => {
    let live = true;
    webllmModels().then(
      (list) => live && setModels(list),
      (error: unknown) => live && setListError(`The WebLLM model list could not be loaded: ${errorMessage(error)}`),
    );
    void probeGpu().then((facts) => live && setGpu(facts));
    return () => {
      live = false;
    };
  }, []);

  useEffect(() => {
    let live = true;
    setCached(null);
    void webllmModelCached(modelId).then((value) => live && setCached(value));
    return () => {
      live = false;
    };
  }, [modelId, webllm.status, cacheVersion]);

  const model = models?.find((item) => item.id === modelId);
  const problems = model && gpu ? modelFitProblems(model, gpu) : [];
  const noWebGPU = gpu !== null && (!gpu.hasWebGPU || !gpu.hasAdapter);
  const loading = webllm.status === 'loading';

  return (
    <div className="fields" data-testid="webllm-fields">
      <label>
        WebLLM model
        <select data-testid="webllm-model" value={modelId} disabled={loading} onChange={(event) => chooseWebLLMModel(event.target.value)}>
          {!model && <option value={modelId}>{modelId}</option>}
          {models?.map((item) => (
            <option key={item.id} value={item.id}>
              {item.id} — {formatMB(item.vramMB)} GPU memory{item.requiredFeatures.length > 0 ? ` (needs ${item.requiredFeatures.join(', ')})` : ''}
            </option>
          ))}
        </select>
      </label>
      {listError && (
        <p className="failure" role="alert">
          {listError}
        </p>
      )}
      <p className="hint" data-testid="webllm-cached">
        {cached === null
          ? 'Checking the browser cache…'
          : cached
            ? "In this browser's cache: loading needs no download."
            : "Not downloaded yet: Load downloads it from huggingface.co once; it then stays in this browser's cache."}
      </p>
      {problems.map((problem) => (
        <p key={problem} className="warning" data-testid="webllm-guidance">
          {problem}
        </p>
      ))}
      <div className="row">
        {cached && (
          <button type="button" data-testid="webllm-delete" disabled={loading} onClick={() => void deleteWebLLMModel(modelId).finally(() => setCacheVersion((version) => version + 1))}>
            Delete from cache
          </button>
        )}
        <button type="button" data-testid="webllm-load" disabled={loading || noWebGPU || (webllm.status === 'ready' && webllm.loadedModel === modelId)} onClick={() => void loadWebLLMModel()}>
          {webllm.status === 'ready' && webllm.loadedModel === modelId ? 'Loaded' : loading ? 'Loading…' : 'Load'}
        </button>
      </div>
      {loading && (
        <div className="progress" data-testid="webllm-progress">
          <div className="progress-track" role="progressbar" aria-label="WebLLM model load" aria-valuemin={0} aria-valuemax={100} aria-valuenow={Math.round(webllm.progress * 100)}>
            <div className="progress-fill" style={{ width: `${Math.round(webllm.progress * 100)}%` }} />
          </div>
          <div className="progress-text">
            <span>{webllm.text}</span>
            <span>{Math.round(webllm.progress * 100)}%</span>
          </div>
        </div>
      )}
      {webllm.status === 'ready' && webllm.loadedModel === modelId && (
        <p className="hint" data-testid="webllm-ready">
          {modelId} is loaded in its own worker; evaluations use it.
        </p>
      )}
      {webllm.status === 'failed' && webllm.error && (
        <p className="failure" role="alert" data-testid="webllm-error">
          {webllm.error}
        </p>
      )}
      <p className="hint">WebLLM runs a prebuilt quantised model on your GPU for evaluating an environment or making warm-up demonstrations. It only generates: training uses the in-tab model.</p>
    </div>
  );
}
