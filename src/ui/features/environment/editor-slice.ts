/** The editor slice: the user's environments, the one open in the editor, its problems, and a shared link awaiting review. */
import type { StateCreator } from 'zustand';
import type { CompileProblem } from './monaco-setup.ts';
import type { SavedEnvironment } from './environment-storage.ts';
import type { SharedState } from '../share/url-state.ts';
import { argsOnOpening } from '../evaluation/evaluation-slice.ts';
import { finishedResultsCleared } from '../../store/finished-results.ts';
import type { PlaygroundState } from '../../store/index.ts';

/** Editor state. */
export interface EditorSlice {
  environments: SavedEnvironment[];
  /** The id of the environment in the editor; opening another sets the run panel's arguments to its own and clears the last file's finished results. */
  currentId: string | null;
  /** Errors in the open file, as the editor marks them. */
  problems: CompileProblem[];
  /** A shared link's content, shown read-only until the person chooses to load it. */
  review: SharedState | null;
  /** A link that could not be opened, and why. */
  shareError: string | null;
  /** The file name when the environment under review was imported from a file rather than a link. */
  reviewFile: string | null;
  setEnvironments(environments: SavedEnvironment[]): void;
  upsertEnvironment(environment: SavedEnvironment): void;
  removeEnvironment(id: string): void;
  setCurrentId(id: string | null): void;
  setProblems(problems: CompileProblem[]): void;
  setReview(review: SharedState | null): void;
  setShareError(message: string | null): void;
  setReviewFile(fileName: string | null): void;
}

/** Creates the editor slice. */
export const createEditorSlice: StateCreator<PlaygroundState, [], [], EditorSlice> = (set) => ({
  environments: [],
  currentId: null,
  problems: [],
  review: null,
  shareError: null,
  reviewFile: null,
  setEnvironments: (environments) => set({ environments }),
  upsertEnvironment: (environment) => set((state) => ({ environments: [environment, ...state.environments.filter((item) => item.id !== environment.id)] })),
  removeEnvironment: (id) => set((state) => ({ environments: state.environments.filter((item) => item.id !== id) })),
  setCurrentId: (currentId) => set((state) => (currentId === state.currentId ? {} : { currentId, ...argsOnOpening(state, currentId), ...finishedResultsCleared(state) })),
  setProblems: (problems) => set({ problems }),
  setReview: (review) => set({ review }),
  setShareError: (shareError) => set({ shareError }),
  setReviewFile: (reviewFile) => set({ reviewFile }),
});
