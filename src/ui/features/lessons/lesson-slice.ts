/**
 * The lesson slice: which lesson the panel shows (from the Lessons menu or a `#lesson=` link), what
 * Start lesson last reported, and whether presenter mode is on (remembered in localStorage). View
 * state only, kept under `lessonView`: nothing in the engine, sandbox or storage reads it.
 */
import type { StateCreator } from 'zustand';
import type { PlaygroundState } from '../../store/index.ts';

/** Where presenter mode is remembered ('1' on, '0' off). */
export const PRESENTER_STORAGE = 'tabrl.presenter';

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

/** Lesson view state in the store. */
export interface LessonSlice {
  lessonView: LessonViewState;
  /** Merges `update` into the lesson view. */
  setLessonView(update: Partial<LessonViewState>): void;
}

function readPresenter(): boolean {
  try {
    return localStorage.getItem(PRESENTER_STORAGE) === '1';
  } catch {
    return false;
  }
}

/** Creates the lesson slice (presenter mode as remembered; no lesson open). */
export const createLessonSlice: StateCreator<PlaygroundState, [], [], LessonSlice> = (set) => ({
  lessonView: { openLessonId: null, note: null, linkError: null, presenter: typeof localStorage === 'undefined' ? false : readPresenter() },
  setLessonView: (update) => set((state) => ({ lessonView: { ...state.lessonView, ...update } })),
});
