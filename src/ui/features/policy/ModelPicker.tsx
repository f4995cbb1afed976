/**
 * The in-tab model picker: each model the app ships (nano, nano-wordle, nano-tools, nano-2m: src/models/shipped-models.ts) with its parameters, size and what it is for, tiny (from scratch), each real preset with its size and whether it is in
 * the browser's cache ("cached · 272 MB" / "download 272 MB"), or a local model folder. Loading shows
 * a progress bar (MB done / total) with Cancel; errors show as alerts; a cached preset can be removed.
 * It says before any download when this browser has no WebGPU or a preset is too large for the GPU.
 */
import { useEffect, useRef } from 'react';
import { formatBytes } from '../../../common/format-bytes.ts';
import { REAL_MODEL_PRESETS } from '../../../models/catalogue.ts';
import { SHIPPED_MODELS, shippedModelDownloadBytes, shippedModelParameters, type ShippedModel } from '../../../models/shipped-models.ts';
import { DEFAULT_LESSON_MODEL } from '../../../rl/lesson.ts';
import { cancelModelLoad, chooseInTabModel, chooseLocalModel, refreshCachedModels, removeCachedModel } from '../models/model-actions.ts';
import { usePlayground } from '../../store/index.ts';
import { ensureEngine } from '../training/training-actions.ts';

/** Loads the chosen model now (errors land in the picker). */
function loadChoice(): void {
  void ensureEngine().catch(() => {});
}

/** Takes the files of a file input as the local model and loads them. */
function pickFiles(input: HTMLInputElement): void {
  const files = [...(input.files ?? [])];
  input.value = '';
  if (files.length === 0) return;
  chooseLocalModel(files);
  loadChoice();
}

/** The model picker of the in-tab policy. */
export function ModelPicker() {
  const inTabModel = usePlayground((state) => state.inTabModel);
  const modelLoad = usePlayground((state) => state.modelLoad);
  const cached = usePlayground((state) => state.cachedModels);
  const presetFit = usePlayground((state) => state.engine.info?.presetFit);
  const loading = modelLoad.status === 'loading';
  const folderInput = useRef<HTMLInputElement>(null);
  const filesInput = useRef<HTMLInputElement>(null);
  const noWebGPU = !('gpu' in navigator);

  useEffect(() => {
    void refreshCachedModels();
  }, []);

  const pick = (id: string) => {
    if (loading) return;
    chooseInTabModel(id);
    loadChoice();
  };

  return (
    <div className="fields model-picker" data-testid="model-picker">
      <div role="radiogroup" aria-label="In-tab model" className="model-options">
        {SHIPPED_MODELS.map((model) => (
          <ModelOption
            key={model.id}
            id={model.id}
            current={inTabModel}
            disabled={loading}
            onPick={pick}
            label={`${model.label}${model.id === DEFAULT_LESSON_MODEL ? ' (default)' : ''}`}
            detail={shippedModelDetail(model)}
          />
        ))}
        <ModelOption id="tiny" current={inTabModel} disabled={loading} onPick={pick} label="Tiny, from scratch" detail="byte tokenizer · random weights · no download" />
        {REAL_MODEL_PRESETS.map((preset) => {
          const problem = presetFit?.[preset.id] ?? null;
          const isCached = cached[preset.id] === true;
          return (
            <div key={preset.id} className="model-row">
              <ModelOption
                id={preset.id}
                current={inTabModel}
                disabled={loading || problem !== null}
                onPick={pick}
                label={preset.name}
                detail={isCached ? `cached · ${formatBytes(preset.downloadBytes)}` : `download ${formatBytes(preset.downloadBytes)}`}
              />
              {isCached && (
                <button type="button" className="link" data-testid={`model-uncache-${preset.id}`} disabled={loading} onClick={() => void removeCachedModel(preset.id)}>
                  Remove from cache
                </button>
              )}
              {problem && (
                <p className="warning" data-testid={`model-too-large-${preset.id}`}>
                  Too large for this GPU: {problem}.
                </p>
              )}
            </div>
          );
        })}
        <ModelOption id="local" current={inTabModel} disabled={loading} onPick={() => folderInput.current?.click()} label="Local folder…" detail="config.json, model.safetensors, tokenizer files" />
        <button type="button" className="link" data-testid="model-files" disabled={loading} onClick={() => filesInput.current?.click()}>
          or pick the files one by one…
        </button>
        <input ref={folderInput} type="file" multiple hidden data-testid="model-folder-input" {...{ webkitdirectory: '', directory: '' }} onChange={(event) => pickFiles(event.target)} />
        <input ref={filesInput} type="file" multiple hidden data-testid="model-files-input" onChange={(event) => pickFiles(event.target)} />
      </div>
      {noWebGPU && (
        <p className="warning" data-testid="model-no-webgpu">
          This browser has no WebGPU, so no model can run in the tab. Use a recent Chrome or Edge, or choose another policy.
        </p>
      )}
      {loading && <LoadProgress loaded={modelLoad.loaded} total={modelLoad.total} />}
      {modelLoad.status === 'failed' && modelLoad.error && (
        <p className="failure" role="alert" data-testid="model-error">
          {modelLoad.error}
        </p>
      )}
      <p className="hint">
        Real models download once from huggingface.co into this browser's cache, then load offline. They train with LoRA (rank 16); tiny and the models the app ships train every weight.
      </p>
    </div>
  );
}

/** A shipped model's line in the picker: its parameters, what it is for, and its size ("2.41M parameters · … · ships with the app, 4.8 MB"). */
function shippedModelDetail(model: ShippedModel): string {
  return `${(shippedModelParameters(model) / 1e6).toFixed(2)}M parameters · ${model.description} · ships with the app, ${(shippedModelDownloadBytes(model) / 1e6).toFixed(1)} MB`;
}

function ModelOption({ id, current, disabled, onPick, label, detail }: { id: string; current: string; disabled: boolean; onPick: (id: string) => void; label: string; detail: string }) {
  return (
    <button type="button" role="radio" aria-checked={current === id} className={current === id ? 'selected' : ''} disabled={disabled} data-testid={`model-${id}`} onClick={() => onPick(id)}>
      <b>{label}</b>{' '}
      <span className="muted" data-testid={`model-detail-${id}`}>
        {detail}
      </span>
    </button>
  );
}

function LoadProgress({ loaded, total }: { loaded: number; total: number }) {
  const percent = total > 0 ? Math.min(100, Math.round((loaded / total) * 100)) : 0;
  return (
    <div className="progress" data-testid="model-progress">
      <div className="progress-track" role="progressbar" aria-label="Model download" aria-valuemin={0} aria-valuemax={100} aria-valuenow={percent}>
        <div className="progress-fill" style={{ width: `${percent}%` }} />
      </div>
      <div className="progress-text">
        <span data-testid="model-progress-text">{total > 0 ? `${(loaded / 1e6).toFixed(1)} / ${(total / 1e6).toFixed(1)} MB` : 'Starting…'}</span>
        <button type="button" data-testid="model-cancel" onClick={cancelModelLoad}>
          Cancel
        </button>
      </div>
    </div>
  );
}
