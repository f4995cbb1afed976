/**
 * The Chat tab: one input, and each message answered side by side by the base model (before
 * training) and the trained one (the open run's weights, or imported ones), each column a multi-turn
 * conversation of its own; sampling settings and Clear. Without a trained model it says so.
 */
import { useState, type FormEvent } from 'react';
import { chatBusy, clearChat, sendChat, stopChat, trainedModelLabel } from './chat-actions.ts';
import { usePlayground } from '../../store/index.ts';
import type { ChatAnswer, ChatTurn } from './chat-slice.ts';
import { chatBaseNote } from './chat-text.ts';

/** The chat tab. */
export function ChatView() {
  const turns = usePlayground((state) => state.chatTurns);
  const settings = usePlayground((state) => state.chatSettings);
  const setSettings = usePlayground((state) => state.setChatSettings);
  const trainedLabel = usePlayground(trainedModelLabel);
  const busy = usePlayground(chatBusy);
  const seed = usePlayground((state) => (state.importedModel ? undefined : state.trainingRun?.seed) ?? state.engine.info?.seed ?? state.settings.seed);
  const engineInfo = usePlayground((state) => state.engine.info);
  const [draft, setDraft] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!draft.trim() || busy) return;
    void sendChat(draft);
    setDraft('');
  };
  return (
    <div className="chat-view" data-testid="chat-view">
      <div className="chat-header">
        <h2>Base vs trained</h2>
        <label className="chat-setting" title="0 picks the likeliest token every time (greedy), so the same message gets the same answer.">
          temperature
          <input
            type="number"
            min={0}
            max={2}
            step={0.1}
            value={settings.temperature}
            data-testid="chat-temperature"
            onChange={(event) => setSettings({ temperature: clamp(Number(event.target.value), 0, 2) })}
          />
        </label>
        <label className="chat-setting" title="The most tokens one answer may have.">
          max tokens
          <input
            type="number"
            min={1}
            max={512}
            step={1}
            value={settings.maxTokens}
            data-testid="chat-max-tokens"
            onChange={(event) => setSettings({ maxTokens: Math.round(clamp(Number(event.target.value), 1, 512)) })}
          />
        </label>
        <button type="button" className="quiet" data-testid="chat-clear" disabled={turns.length === 0} onClick={clearChat}>
          Clear
        </button>
      </div>
      {trainedLabel === null ? (
        <p className="empty" data-testid="chat-no-run">
          There is no trained model yet. Warm up or train the in-tab model (or import trained weights under Files), then compare its answers here with those of the model before training.
        </p>
      ) : (
        <>
          <p className="hint chat-note">Each message goes to both models; each column keeps its own conversation. {chatBaseNote(engineInfo, seed)}</p>
          <div className="chat-columns" data-testid="chat-columns">
            <ChatColumn title="base" turns={turns} column="base" />
            <ChatColumn title={`trained — ${trainedLabel}`} turns={turns} column="trained" />
          </div>
        </>
      )}
      <form className="chat-input" onSubmit={submit}>
        <textarea
          value={draft}
          rows={2}
          placeholder="A message like the environment's tasks, e.g. the prompt of a training task"
          data-testid="chat-input"
          disabled={trainedLabel === null}
          onChange={(event) => setDraft(event.target.value)}
          onKeyDown={(event) => {
            if (event.key === 'Enter' && !event.shiftKey) submit(event);
          }}
        />
        {busy ? (
          <button type="button" className="danger" data-testid="chat-stop" onClick={stopChat}>
            Stop
          </button>
        ) : (
          <button type="submit" className="primary" data-testid="chat-send" disabled={trainedLabel === null || !draft.trim()}>
            Send
          </button>
        )}
      </form>
    </div>
  );
}

function ChatColumn({ title, turns, column }: { title: string; turns: ChatTurn[]; column: 'base' | 'trained' }) {
  return (
    <section className="chat-column" data-testid={`chat-column-${column}`} aria-label={title}>
      <h3>{title}</h3>
      {turns.length === 0 && <p className="hint">No messages yet.</p>}
      {turns.map((turn, index) => (
        <div key={index} className="chat-turn">
          <div className="message message-user">
            <div className="message-role">user</div>
            <p className="message-content">{turn.user}</p>
          </div>
          <Answer answer={turn[column]} label={column === 'trained' && turn.trainedLabel !== title.replace(/^trained — /, '') ? turn.trainedLabel : null} testId={`chat-answer-${column}`} />
        </div>
      ))}
    </section>
  );
}

function Answer({ answer, label, testId }: { answer: ChatAnswer; label: string | null; testId: string }) {
  return (
    <div className={`message message-assistant chat-answer ${answer.status}`} data-testid={testId} data-status={answer.status}>
      <div className="message-role">
        assistant{label ? ` · ${label}` : ''}
        {answer.ms !== undefined ? ` · ${(answer.ms / 1000).toFixed(1)} s` : ''}
      </div>
      {answer.status === 'pending' && <p className="message-content muted">…</p>}
      {answer.status === 'done' && (
        <p className="message-content" data-testid={`${testId}-text`}>
          {answer.text === '' ? <em className="muted">(empty answer)</em> : answer.text}
        </p>
      )}
      {answer.status === 'failed' && <p className="message-content failure-text">{answer.error}</p>}
    </div>
  );
}

function clamp(value: number, min: number, max: number): number {
  return Number.isFinite(value) ? Math.min(max, Math.max(min, value)) : min;
}
