/** The lesson panel beside the editor: the open lesson's goal and steps, Start lesson, and the way to the previous and next lessons. */
import { useState } from 'react';
import { usePlayground } from '../../store/index.ts';
import { closeLesson, openLesson, setLessonNote } from './lesson-state.ts';
import { startLesson } from './lesson-actions.ts';
import { LessonText } from './LessonText.tsx';
import { LESSONS, lessonById } from './lessons.ts';
import { errorMessage } from '../../../common/error-message.ts';

/** The panel; renders nothing while no lesson is open. */
export function LessonPanel() {
  const id = usePlayground((state) => state.lessonView.openLessonId);
  const note = usePlayground((state) => state.lessonView.note);
  const linkError = usePlayground((state) => state.lessonView.linkError);
  const [starting, setStarting] = useState(false);
  const lesson = id === null ? undefined : lessonById(id);
  if (!lesson) {
    if (!linkError) return null;
    return (
      <aside className="lesson-pane" aria-label="Lesson link" data-testid="lesson-panel">
        <p className="failure" role="alert" data-testid="lesson-link-error">
          {linkError}
        </p>
        <button type="button" className="quiet" onClick={closeLesson}>
          Close
        </button>
      </aside>
    );
  }
  const index = LESSONS.indexOf(lesson);
  const previous = LESSONS[index - 1];
  const next = LESSONS[index + 1];
  const start = async () => {
    setStarting(true);
    try {
      setLessonNote({ lessonId: lesson.id, text: await startLesson(lesson), ok: true });
    } catch (error) {
      setLessonNote({ lessonId: lesson.id, text: errorMessage(error), ok: false });
    } finally {
      setStarting(false);
    }
  };
  return (
    <aside className="lesson-pane" aria-label={`Lesson ${lesson.id}`} data-testid="lesson-panel">
      <div className="lesson-head">
        <span className="lesson-number">
          Lesson {lesson.id} of {LESSONS.at(-1)?.id ?? LESSONS.length}
        </span>
        {/* In the head row, so a short pane (800×600) shows it without scrolling. */}
        <span className="lesson-head-actions">
          <button type="button" className="primary" disabled={starting} onClick={() => void start()} data-testid="lesson-start">
            Start lesson
          </button>
          <button type="button" className="quiet" onClick={closeLesson} aria-label="Close the lesson" data-testid="lesson-close">
            ✕
          </button>
        </span>
      </div>
      <h2 data-testid="lesson-title">{lesson.title}</h2>
      <p className="lesson-goal">{lesson.goal}</p>
      {note?.lessonId === lesson.id && (
        <p className={note.ok ? 'lesson-note' : 'failure'} role="status" data-testid="lesson-note">
          {note.text}
        </p>
      )}
      <ol className="lesson-steps">
        {lesson.steps.map((step, i) => (
          <li key={i}>
            <LessonText text={step} />
          </li>
        ))}
      </ol>
      <div className="lesson-nav">
        {previous ? (
          <button type="button" className="quiet" onClick={() => openLesson(previous.id)}>
            ← Lesson {previous.id}
          </button>
        ) : (
          <span />
        )}
        {next && (
          <button type="button" onClick={() => openLesson(next.id)} data-testid="lesson-next">
            Lesson {next.id} →
          </button>
        )}
      </div>
    </aside>
  );
}
