/**
 * The lesson panel's and presenter mode's own small store: which lesson is open (from the Lessons
 * menu or a `#lesson=` link), what Start lesson last reported, and whether presenter mode is on
 * (remembered in localStorage). Kept apart from the playground store: it is view state only, and
 * nothing in the engine, sandbox or storage reads it.
 */
import { create } from 'zustand';
import { LESSONS } from './lessons.ts';
import { lessonHash, parseLessonHash } from './lesson-hash.ts';

const PRESENTER_STORAGE = 'tabrl.presenter';

/** Lesson and presenter view state. */
export interface LessonViewState {
  /** The lesson shown beside the editor, or null. */
  openLessonId: number | null;
  /** What Start lesson did, or why it could not (shown in the panel). */
  note: { lessonId: number; text: string; ok: boolean } | null;
  /** A lesson link that could not be opened, and why. */
  linkError: string | null;
  presenter: boolean;
}

function readPresenter(): boolean {
  try {
    return localStorage.getItem(PRESENTER_STORAGE) === '1';
  } catch {
    return false;
  }
}

/** The store hook. */
export const useLessonView = create<LessonViewState>()(() => ({
  openLessonId: null,
  note: null,
  linkError: null,
  presenter: typeof localStorage === 'undefined' ? false : readPresenter(),
}));

/** Shows lesson `id` beside the editor and puts its link in the address bar (unless a share link is there). */
export function openLesson(id: number): void {
  useLessonView.setState({ openLessonId: id, linkError: null });
  const hash = location.hash.slice(1);
  if (hash === '' || /^lesson=\d*$/.test(hash)) history.replaceState(null, '', `${location.pathname}${location.search}#${lessonHash(id)}`);
}

/** Hides the lesson panel (and drops a lesson-only link from the address bar). */
export function closeLesson(): void {
  useLessonView.setState({ openLessonId: null, linkError: null });
  if (/^#lesson=\d*$/.test(location.hash)) history.replaceState(null, '', `${location.pathname}${location.search}`);
}

/** Records what Start lesson did. */
export function setLessonNote(note: LessonViewState['note']): void {
  useLessonView.setState({ note });
}

/** Turns presenter mode on or off (large type, a layout for 1280×720 projectors); remembered. */
export function setPresenter(presenter: boolean): void {
  useLessonView.setState({ presenter });
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
  if (parsed.kind === 'lesson') useLessonView.setState({ openLessonId: parsed.id, linkError: null });
  else if (parsed.kind === 'error') useLessonView.setState({ linkError: parsed.message });
}
