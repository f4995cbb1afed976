/** The rollout viewer: every rollout of the run, and for the selected one its transcript, rewards per function and errors. */
import type { Message, RolloutRecord } from '../../../envs/index.ts';
import { usePlayground } from '../../store/index.ts';
import { expectedAnswerChip } from '../../kit/result-text.ts';

/** The viewer, filling the main area. */
export function RolloutViewer() {
  const records = usePlayground((state) => state.run.records);
  const selected = usePlayground((state) => state.selectedRecord);
  const selectRecord = usePlayground((state) => state.selectRecord);
  const record = records[Math.min(selected, records.length - 1)];
  if (records.length === 0)
    return (
      <div className="empty">
        No rollouts yet. Choose a policy and press <b>Evaluate</b>.
      </div>
    );
  return (
    <div className="viewer" data-testid="rollout-viewer">
      <ol className="rollout-list" aria-label="Rollouts">
        {records.map((item, index) => (
          <li key={`${item.taskIndex}-${item.rolloutIndex}`}>
            <button type="button" className={index === selected ? 'selected' : ''} onClick={() => selectRecord(index)} data-testid="rollout-item">
              <span className={`badge ${item.passed ? 'pass' : 'fail'}`}>{item.passed ? '✓' : '✗'}</span>
              <span>
                Task {item.taskIndex} · #{item.rolloutIndex}
              </span>
              <span className="reward">{item.reward.toFixed(2)}</span>
              {item.errors.length > 0 && (
                <span className="badge error" title="errors">
                  !
                </span>
              )}
            </button>
          </li>
        ))}
      </ol>
      {record && <RolloutDetail record={record} />}
    </div>
  );
}

function RolloutDetail({ record }: { record: RolloutRecord }) {
  return (
    <article className="rollout-detail" data-testid="rollout-detail">
      <header className="rollout-header">
        <h2>
          Task {record.taskIndex}, rollout {record.rolloutIndex}
        </h2>
        <span className={`badge ${record.passed ? 'pass' : 'fail'}`}>{record.passed ? 'passed' : 'failed'}</span>
        <span className="chip">reward {record.reward.toFixed(3)}</span>
        <span className="chip">{record.stopReason}</span>
        {record.answer !== undefined && (
          <span className="chip" data-testid="expected-answer" title="The task's reference answer from the dataset, not the model's reply">
            {expectedAnswerChip(record.answer)}
          </span>
        )}
      </header>
      <div className="rewards">
        {Object.entries(record.scores).map(([name, value]) => (
          <span key={name} className="chip">
            <code>{name}</code> {value.toFixed(3)}
          </span>
        ))}
      </div>
      {record.errors.length > 0 && (
        <ul className="errors" data-testid="rollout-errors">
          {record.errors.map((error, index) => (
            <li key={index}>
              <b>{error.source}</b> · {error.name}: {error.message}
            </li>
          ))}
        </ul>
      )}
      <div className="transcript">
        {[...record.prompt, ...record.completion].map((message, index) => (
          <MessageView key={index} message={message} fromPrompt={index < record.prompt.length} />
        ))}
      </div>
    </article>
  );
}

function MessageView({ message, fromPrompt }: { message: Message; fromPrompt: boolean }) {
  return (
    <div className={`message role-${message.role}${fromPrompt ? ' prompt' : ''}`}>
      <div className="message-role">
        {message.role}
        {message.name ? ` · ${message.name}` : ''}
      </div>
      <pre className="message-content">{message.content}</pre>
      {message.tool_calls?.map((call) => (
        <pre key={call.id} className="tool-call">
          → {call.function.name}({call.function.arguments})
        </pre>
      ))}
    </div>
  );
}
