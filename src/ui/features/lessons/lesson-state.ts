/**
 * The lesson panel's and presenter mode's actions: open and close a lesson (keeping its link in the
 * address bar), record what Start lesson did, presenter mode on or off, and a `#lesson=` link. The
 * state they write is the store's lesson slice (lesson-slice.ts).
 */
import { usePlayground } from '../../store/index.ts';
import { PRESENTER_STORAGE, type LessonViewState } from './lesson-slice.ts';
import { LESSONS } from './lessons.ts';
import { lessonHash, parseLessonHash } from './lesson-hash.ts';

const setLessonView = (update: Partial<LessonViewState>) => usePlayground.getState().setLessonView(update);

/** Shows lesson `id` beside the editor and puts its link in the address bar (unless a share link is there). */
export function openLesson(id: number): void {
  setLessonView({ openLessonId: id, linkError: null });
  const hash = location.hash.slice(1);
  if (hash === '' || /^lesson=\d*$/.test(hash)) history.replaceState(null, '', `${location.pathname}${location.search}#${lessonHash(id)}`);
}

/** Hides the lesson panel (and drops a lesson-only link from the address bar). */
export function closeLesson(): void {
  setLessonView({ openLessonId: null, linkError: null });
  if (/^#lesson=\d*$/.test(location.hash)) history.replaceState(null, '', `${location.pathname}${location.search}`);
}

/** Records what Start lesson did. */
export function setLessonNote(note: LessonViewState['note']): void {
  setLessonView({ note });
}

/** Turns presenter mode on or off (large type, a layout for 1280×720 projectors); remembered. */
export function setPresenter(presenter: boolean): void {
  setLessonView({ presenter });
  try {
    localStorage.setItem(PRESENTER_STORAGE, presenter ? '1' : '0');
  } catch {
    // storage refused (private mode): the toggle still works for this page
  }
}

/** Opens the lesson a `#lesson=` hash names (or says why it cannot); a hash without one changes nothing. */
export function openLessonFromHash(hash: string): void {
  const parsed = parseLessonHash(
    hash,
    LESSONS.map((lesson) => lesson.id),
  );
  if (parsed.kind === 'lesson') setLessonView({ openLessonId: parsed.id, linkError: null });
  else if (parsed.kind === 'error') setLessonView({ linkError: parsed.message });
}
