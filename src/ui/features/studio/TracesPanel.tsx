/**
 * "Tasks from traces": import a JSONL of a deployed agent's conversations (OpenAI chat logs, or
 * TabRL's and verifiers' results.jsonl); each user turn becomes a task with the original answer kept
 * as its reference, duplicates merged, and every line that could not be read listed by number; when
 * the agent used tools, their simulation (ToolSimulationPanel).
 */
import { importTraces, openTracesAsEnvironment } from './studio-actions.ts';
import { ToolSimulationPanel } from './ToolSimulationPanel.tsx';
import { SAMPLE_TRACES } from './sample-traces.ts';
import { usePlayground } from '../../store/index.ts';

/** The traces card. */
export function TracesPanel({ onOpened }: { onOpened: () => void }) {
  const traces = usePlayground((state) => state.studio.traces);
  const error = usePlayground((state) => state.studio.tracesError);
  return (
    <>
      <section className="card" aria-labelledby="traces-heading">
        <h2 id="traces-heading">Tasks from traces</h2>
        <p className="hint">
          One conversation per line: <code>{'{"messages": [...]}'}</code> from a chat-completions log, or a <code>results.jsonl</code> line (<code>prompt</code>, <code>completion</code>). The last
          user turn becomes the task; the assistant's answer is kept as the reference a judge compares with.
        </p>
        <div className="studio-row">
          <label className="button-like">
            Import a JSONL file
            <input
              type="file"
              accept=".jsonl,.json,.ndjson,application/x-ndjson,application/json,text/plain"
              data-testid="traces-file"
              className="visually-hidden"
              onChange={(event) => {
                const file = event.target.files?.[0];
                event.target.value = '';
                if (file) void file.text().then((text) => importTraces(file.name, text));
              }}
            />
          </label>
          <button type="button" onClick={() => importTraces(SAMPLE_TRACES.name, SAMPLE_TRACES.text)} data-testid="traces-add-sample">
            Add the sample trace log
          </button>
          {traces && traces.parse.tasks.length > 0 && (
            <button type="button" onClick={() => void openTracesAsEnvironment().then((opened) => opened && onOpened())} data-testid="traces-open">
              Open as environment ({traces.parse.tasks.length} tasks)
            </button>
          )}
        </div>
        {error && (
          <p className="failure" role="alert" data-testid="traces-error">
            {error}
          </p>
        )}
        {traces && (
          <p className="summary-line" data-testid="traces-summary">
            <span className="chip">{traces.fileName}</span>
            <span className="chip">{traces.parse.lines} lines</span>
            <span className="chip">{traces.parse.tasks.length} tasks</span>
            <span className="chip">{traces.parse.duplicates} duplicates merged</span>
            <span className={traces.parse.skipped.length > 0 ? 'chip chip-bad' : 'chip'}>{traces.parse.skipped.length} skipped</span>
          </p>
        )}
        {traces && traces.parse.tasks.length > 0 && (
          <p className="hint">Opened as an environment, these tasks are graded 0–10 by the judge (Judge card), with the original answers as a guide: pick a judge model before you evaluate.</p>
        )}
      </section>
      <ToolSimulationPanel onOpened={onOpened} />
      {traces && traces.parse.skipped.length > 0 && (
        <section className="card" aria-labelledby="skipped-heading">
          <h2 id="skipped-heading">Lines skipped</h2>
          <ul className="flag-reasons" data-testid="traces-skipped">
            {traces.parse.skipped.map((skip) => (
              <li key={skip.line}>
                line {skip.line}: {skip.reason}
              </li>
            ))}
          </ul>
        </section>
      )}
      {traces && traces.parse.tasks.length > 0 && (
        <section className="card" aria-labelledby="trace-tasks-heading">
          <h2 id="trace-tasks-heading">Tasks</h2>
          <div className="table-scroll">
            <table className="studio-table" data-testid="trace-tasks">
              <thead>
                <tr>
                  <th>Line</th>
                  <th>Task (last user turn)</th>
                  <th>Reference (the original answer)</th>
                  <th>Seen</th>
                </tr>
              </thead>
              <tbody>
                {traces.parse.tasks.map((task) => (
                  <tr key={task.info.line} data-testid="trace-task-row">
                    <td className="num">{task.info.line}</td>
                    <td>{task.question}</td>
                    <td>{task.info.reference ?? <i>(none)</i>}</td>
                    <td className="num">{1 + task.info.duplicates}×</td>
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
