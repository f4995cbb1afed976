/** The header: title, the environment picker (saved files and "new from built-in"), rename, delete and Share. */
import { useState } from 'react';
import { createFromBuiltin, deleteCurrentEnvironment, openEnvironment, renameCurrentEnvironment } from '../features/environment/environment-actions.ts';
import { createShareLink } from '../features/share/share-actions.ts';
import { BUILTINS } from '../features/environment/builtins.ts';
import { usePlayground } from '../store/index.ts';
import { LESSONS } from '../features/lessons/lessons.ts';
import { openLesson, setPresenter } from '../features/lessons/lesson-state.ts';

/** The top bar. */
export function TopBar() {
  const environments = usePlayground((state) => state.environments);
  const currentId = usePlayground((state) => state.currentId);
  const current = environments.find((item) => item.id === currentId);
  const [shared, setShared] = useState<string | null>(null);
  const lessonId = usePlayground((state) => state.lessonView.openLessonId);
  const presenter = usePlayground((state) => state.lessonView.presenter);

  const share = async () => {
    const url = createShareLink();
    try {
      await navigator.clipboard.writeText(url);
      setShared('Link copied');
    } catch {
      setShared('Link is in the address bar');
    }
    setTimeout(() => setShared(null), 2500);
  };

  return (
    <header className="top-bar">
      <h1 className="title">
        Tab<span>RL</span>
      </h1>
      <label className="picker">
        <span className="visually-hidden">Environment</span>
        <select aria-label="Environment" data-testid="environment-picker" value={currentId ?? ''} onChange={(event) => openEnvironment(event.target.value)}>
          {environments.map((item) => (
            <option key={item.id} value={item.id}>
              {item.name}
            </option>
          ))}
        </select>
      </label>
      <select
        aria-label="New from built-in"
        data-testid="new-from-builtin"
        value=""
        onChange={(event) => {
          if (event.target.value) void createFromBuiltin(event.target.value);
        }}
      >
        <option value="">+ New from built-in…</option>
        {BUILTINS.map((builtin) => (
          <option key={builtin.name} value={builtin.name} title={builtin.description}>
            {builtin.name} — {builtin.description}
          </option>
        ))}
      </select>
      <button
        type="button"
        className="quiet"
        onClick={() => {
          const name = prompt('Name of this environment', current?.name ?? '');
          if (name) void renameCurrentEnvironment(name);
        }}
      >
        Rename
      </button>
      <button
        type="button"
        className="quiet"
        onClick={() => {
          if (confirm(`Delete "${current?.name}"? This cannot be undone.`)) void deleteCurrentEnvironment();
        }}
      >
        Delete
      </button>
      <span className="spacer" />
      <select
        aria-label="Lessons"
        className="lesson-picker"
        data-testid="lesson-picker"
        value={lessonId ?? ''}
        onChange={(event) => {
          if (event.target.value) openLesson(Number(event.target.value));
        }}
      >
        <option value="">Lessons…</option>
        {LESSONS.map((lesson) => (
          <option key={lesson.id} value={lesson.id}>
            {lesson.id}. {lesson.title}
          </option>
        ))}
      </select>
      <button
        type="button"
        className={presenter ? 'toggle on' : 'toggle'}
        aria-pressed={presenter}
        onClick={() => setPresenter(!presenter)}
        data-testid="presenter-toggle"
        title="Large type and a layout for a projector (1280×720)"
      >
        Presenter
      </button>
      {/* The toast floats under Share, so it never pushes Share onto another row. */}
      <span className="share-anchor">
        <button type="button" data-testid="share" onClick={() => void share()}>
          Share
        </button>
        {shared && (
          <span className="toast" role="status" data-testid="share-toast">
            {shared}
          </span>
        )}
      </span>
    </header>
  );
}
