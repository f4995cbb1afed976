/** A first visit's one-line answer to "what is this page for?", with the way into lesson 1; dismissed once, remembered in localStorage (`tabrl.welcomed`). */
import { useState } from 'react';
import { openLesson } from '../features/lessons/lesson-state.ts';
import { usePlayground } from '../store/index.ts';

const KEY = 'tabrl.welcomed';

function seen(): boolean {
  try {
    return localStorage.getItem(KEY) !== null;
  } catch {
    return true;
  }
}

/** The hint bar, shown until dismissed (or a lesson is opened), never with a lesson open. */
export function FirstVisitHint() {
  const [hidden, setHidden] = useState(seen);
  const lessonOpen = usePlayground((state) => state.lessonView.openLessonId !== null);
  if (hidden || lessonOpen) return null;
  const dismiss = () => {
    try {
      localStorage.setItem(KEY, String(Date.now()));
    } catch {
      // Storage blocked: the hint goes for this visit only.
    }
    setHidden(true);
  };
  return (
    <div className="first-visit" role="note" data-testid="first-visit-hint">
      <span>
        <b>TabRL trains language-model agents in this browser tab.</b> Write an environment (tasks and reward functions) in the editor, evaluate a policy against it with the run panel, then warm up
        and train a small model right here. New to it? Lesson 1 takes ten minutes.
      </span>
      <span className="row">
        <button
          type="button"
          className="primary"
          data-testid="first-visit-lesson"
          onClick={() => {
            dismiss();
            openLesson(1);
          }}
        >
          Open lesson 1
        </button>
        <button type="button" className="quiet" data-testid="first-visit-dismiss" onClick={dismiss}>
          Dismiss
        </button>
      </span>
    </div>
  );
}
