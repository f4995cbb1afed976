/**
 * "Tasks from documents": drop or paste documents, pick the generator and the solver, run the
 * synthesis (progress, Cancel), read every candidate — kept, or rejected with its reason — and open
 * the kept ones as an environment file.
 */
import { useState, type DragEvent } from 'react';
import { addDocumentFiles, addDocuments, cancelSynthesis, openSynthesisAsEnvironment, removeDocument, startSynthesis } from './studio-actions.ts';
import { RoleSelect } from './RoleSelect.tsx';
import { SAMPLE_DOCUMENT } from './sample-document.ts';
import { usePlayground } from '../../store/index.ts';

/** The documents card and its candidates table. */
export function DocumentsPanel({ onOpened }: { onOpened: () => void }) {
  const documents = usePlayground((state) => state.studio.documents);
  const generator = usePlayground((state) => state.studio.generator);
  const solver = usePlayground((state) => state.studio.solver);
  const k = usePlayground((state) => state.studio.k);
  const questionsPerChunk = usePlayground((state) => state.studio.questionsPerChunk);
  const synthesis = usePlayground((state) => state.studio.synthesis);
  const [pasted, setPasted] = useState('');
  const [over, setOver] = useState(false);
  const running = synthesis.status === 'running';

  const onDrop = (event: DragEvent) => {
    event.preventDefault();
    setOver(false);
    void addDocumentFiles([...event.dataTransfer.files]);
  };
  const addPasted = () => {
    addDocuments([{ name: `pasted-${documents.length + 1}`, text: pasted, paragraphs: 'separate' }]);
    setPasted('');
  };
  const kept = synthesis.tasks.filter((task) => task.kept).length;

  return (
    <>
      <section className="card" aria-labelledby="documents-heading">
        <h2 id="documents-heading">Tasks from documents</h2>
        <p className="hint">
          A generator writes questions grounded in each passage; a solver must answer them with the passage (open book) to keep them, and is then asked again without it (closed book): the gap is what
          the document teaches.
        </p>
        <div
          className={over ? 'drop-zone over' : 'drop-zone'}
          data-testid="document-drop"
          onDragOver={(event) => {
            event.preventDefault();
            setOver(true);
          }}
          onDragLeave={() => setOver(false)}
          onDrop={onDrop}
        >
          Drop .txt or .md files here, or{' '}
          <label className="link">
            choose files
            <input
              type="file"
              multiple
              accept=".txt,.md,.markdown,text/plain,text/markdown"
              className="visually-hidden"
              data-testid="document-files"
              onChange={(event) => {
                void addDocumentFiles([...(event.target.files ?? [])]);
                event.target.value = '';
              }}
            />
          </label>
        </div>
        <textarea className="studio-paste" placeholder="…or paste text here" value={pasted} data-testid="document-paste" onChange={(event) => setPasted(event.target.value)} />
        <div className="studio-row">
          <button type="button" onClick={addPasted} disabled={pasted.trim() === ''} data-testid="document-add-pasted">
            Add pasted text
          </button>
          <button type="button" className="quiet" onClick={() => addDocuments([SAMPLE_DOCUMENT])} data-testid="document-add-sample">
            Add the sample document
          </button>
        </div>
        {documents.length > 0 && (
          <ul className="document-list" data-testid="document-list">
            {documents.map((document, i) => (
              <li key={`${document.name}-${i}`} className="chip">
                {document.name} · {document.text.length.toLocaleString()} chars{' '}
                <button type="button" className="link" aria-label={`Remove ${document.name}`} onClick={() => removeDocument(i)}>
                  ×
                </button>
              </li>
            ))}
          </ul>
        )}
        <div className="studio-row">
          <RoleSelect label="Generator" value={generator} testId="studio-generator" onChange={(value) => usePlayground.getState().setStudio({ generator: value })} />
          <RoleSelect label="Solver" value={solver} testId="studio-solver" onChange={(value) => usePlayground.getState().setStudio({ solver: value })} />
          <label>
            k<input type="number" min={1} max={16} value={k} data-testid="studio-k" onChange={(event) => usePlayground.getState().setStudio({ k: Math.max(1, Number(event.target.value) || 1) })} />
          </label>
          <label>
            Questions per passage
            <input
              type="number"
              min={1}
              max={20}
              value={questionsPerChunk}
              onChange={(event) => usePlayground.getState().setStudio({ questionsPerChunk: Math.max(1, Number(event.target.value) || 1) })}
            />
          </label>
        </div>
        <div className="studio-row">
          {running ? (
            <button type="button" onClick={cancelSynthesis} data-testid="synthesis-cancel">
              Cancel
            </button>
          ) : (
            <button type="button" className="primary" onClick={() => void startSynthesis()} data-testid="synthesis-start">
              Make tasks
            </button>
          )}
          {kept > 0 && !running && (
            <button type="button" onClick={() => void openSynthesisAsEnvironment().then((opened) => opened && onOpened())} data-testid="synthesis-open">
              Open as environment ({kept} tasks)
            </button>
          )}
        </div>
        {synthesis.progress && (
          <p className="hint" data-testid="synthesis-progress">
            {synthesis.progress.chunksGenerated} of {synthesis.progress.chunks} passages read · {synthesis.progress.decided} of {synthesis.progress.candidates} candidates decided ·{' '}
            {synthesis.progress.kept} kept
            {synthesis.status === 'cancelled' && ' · cancelled'}
          </p>
        )}
        {synthesis.error && (
          <p className="failure" role="alert" data-testid="synthesis-error">
            {synthesis.error}
          </p>
        )}
        {synthesis.report && (
          <p className="summary-line" data-testid="synthesis-report">
            <span className="chip">{synthesis.report.kept} kept</span>
            <span className="chip">{synthesis.report.rejected} rejected</span>
            {Object.entries(synthesis.report.rejections)
              .filter(([, count]) => count > 0)
              .map(([code, count]) => (
                <span key={code} className="chip chip-bad">
                  {code} {count}
                </span>
              ))}
            {synthesis.report.groundingGap !== null && <span className="chip">grounding gap {synthesis.report.groundingGap.toFixed(2)}</span>}
            <span className="chip">{(synthesis.report.wallMs / 1000).toFixed(1)} s</span>
          </p>
        )}
      </section>
      {synthesis.tasks.length > 0 && (
        <section className="card" aria-labelledby="candidates-heading">
          <h2 id="candidates-heading">Candidates</h2>
          <div className="table-scroll">
            <table className="studio-table" data-testid="candidates">
              <thead>
                <tr>
                  <th>Kept</th>
                  <th>Question</th>
                  <th>Answer</th>
                  <th>Open</th>
                  <th>Closed</th>
                  <th>Source</th>
                  <th>Reason</th>
                </tr>
              </thead>
              <tbody>
                {synthesis.tasks.map((task) => (
                  <tr key={task.id} className={task.kept ? 'kept' : 'rejected'} data-testid="candidate-row" data-kept={task.kept}>
                    <td>{task.kept ? <span className="badge pass">✓</span> : <span className="badge fail">✗</span>}</td>
                    <td>{task.question || <i>(none)</i>}</td>
                    <td>{task.answer}</td>
                    <td className="num">{rate(task.openBookPassRate)}</td>
                    <td className="num">{rate(task.closedBookPassRate)}</td>
                    <td className="num" title={task.source.chunk}>
                      {task.source.document} {task.source.start}–{task.source.end}
                    </td>
                    <td data-testid="candidate-reason">{task.reason ?? ''}</td>
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

function rate(value: number | null): string {
  return value === null ? '—' : `${Math.round(value * 100)}%`;
}
