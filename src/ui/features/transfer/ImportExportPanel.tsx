/** The Files card: download and import the environment file, evaluation results, warm-up data and the trained model. */
import { useRef, type ChangeEvent } from 'react';
import { trainedModelLabel } from '../chat/chat-actions.ts';
import { usePlayground } from '../../store/index.ts';
import { isBusy } from '../../store/selectors.ts';
import { clearImportedWarmup, exportEnvironmentFile, exportModelFile, exportResultsFile, exportWarmupData, importEnvironmentFile, importModelFile, importWarmupData } from './transfer-actions.ts';

/** The Files card. */
export function ImportExportPanel() {
  const records = usePlayground((state) => state.run.records.length);
  const lastWarmup = usePlayground((state) => state.lastWarmup?.transcripts.length ?? 0);
  const importedWarmup = usePlayground((state) => state.importedWarmup);
  const trained = usePlayground(trainedModelLabel);
  const busy = usePlayground(isBusy);
  const message = usePlayground((state) => state.transferMessage);
  return (
    <section className="card" aria-labelledby="files-heading" data-testid="files-card">
      <h2 id="files-heading">Files</h2>
      <div className="transfer-rows">
        <span>Environment</span>
        <div className="row">
          <button type="button" data-testid="export-environment" onClick={exportEnvironmentFile} title="The open file's source, as in the editor">
            Download .ts
          </button>
          <FileButton label="Import .ts…" accept=".ts,.mts,.js,text/plain" testId="import-environment" onFile={importEnvironmentFile} title="Shown for review before it is loaded, like a share link" />
        </div>
        <span>Results</span>
        <div className="row">
          <button
            type="button"
            data-testid="export-results"
            disabled={records === 0}
            onClick={exportResultsFile}
            title="The last evaluation's rollouts, one line each, as tabrl eval writes results.jsonl"
          >
            Download results.jsonl
          </button>
        </div>
        <span>Warm-up data</span>
        <div className="row">
          <button type="button" data-testid="export-warmup" disabled={lastWarmup === 0} onClick={exportWarmupData} title="The chats the last warm-up trained on (OpenAI format, one per line)">
            Download .jsonl
          </button>
          <FileButton
            label="Import .jsonl…"
            accept=".jsonl,.json,application/x-ndjson"
            testId="import-warmup"
            onFile={importWarmupData}
            title='Chats ({"messages": [...]} per line) the next warm-up trains on instead of the expert'
          />
        </div>
        <span>Model</span>
        <div className="row">
          <button
            type="button"
            data-testid="export-model"
            disabled={trained === null || busy}
            onClick={() => void exportModelFile()}
            title="LoRA: the PEFT adapter; full fine-tune: config.json + model.safetensors; as a zip"
          >
            Download .zip
          </button>
          <FileButton
            label="Import .zip…"
            accept=".zip,application/zip"
            testId="import-model"
            disabled={busy}
            onFile={importModelFile}
            title="An adapter or model-folder zip exported from this model"
          />
        </div>
      </div>
      {importedWarmup && (
        <p className="hint" data-testid="imported-warmup">
          Warm up trains on {importedWarmup.transcripts.length} chats from {importedWarmup.name}.{' '}
          <button type="button" className="link" onClick={clearImportedWarmup}>
            Use the expert again
          </button>
        </p>
      )}
      {message && (
        <p className={message.kind === 'ok' ? 'transfer-ok' : 'failure'} role={message.kind === 'ok' ? 'status' : 'alert'} data-testid="transfer-message">
          {message.text}
        </p>
      )}
    </section>
  );
}

function FileButton({ label, accept, testId, title, disabled, onFile }: { label: string; accept: string; testId: string; title: string; disabled?: boolean; onFile: (file: File) => unknown }) {
  const input = useRef<HTMLInputElement>(null);
  const picked = (event: ChangeEvent<HTMLInputElement>) => {
    const file = event.target.files?.[0];
    event.target.value = '';
    if (file) void onFile(file);
  };
  return (
    <>
      <button type="button" title={title} disabled={disabled} onClick={() => input.current?.click()}>
        {label}
      </button>
      <input ref={input} type="file" accept={accept} data-testid={testId} onChange={picked} />
    </>
  );
}
