/**
 * The playground's one zustand store, built from the features' slices (zustand's slices pattern;
 * each slice is a file of its feature, features/<name>/<name>-slice.ts) with `zustand/vanilla`, so
 * the store itself has no React (actions and tests use it as it is), and the React hook on top.
 * Components select the narrowest field they render; actions that talk to workers, storage or the
 * URL are module-level functions in the features (features/training/training-actions.ts, ...), not
 * store methods.
 */
import { useStore, type StateCreator } from 'zustand';
import { createStore } from 'zustand/vanilla';
import { createChatSlice, type ChatSlice } from '../features/chat/chat-slice.ts';
import { createEditorSlice, type EditorSlice } from '../features/environment/editor-slice.ts';
import { createEvaluationSlice, type EvaluationSlice } from '../features/evaluation/evaluation-slice.ts';
import { createPolicySlice, type PolicySlice } from '../features/policy/policy-slice.ts';
import { createTrainingSlice, type TrainingSlice } from '../features/training/training-slice.ts';
import { createTransferSlice, type TransferSlice } from '../features/transfer/transfer-slice.ts';
import { createJudgeSlice, type JudgeSlice } from '../features/judge/judge-slice.ts';
import { createSimulatorSlice, type SimulatorSlice } from '../features/judge/simulator-slice.ts';
import { createStudioSlice, type StudioSlice } from '../features/studio/studio-slice.ts';
import { createLessonSlice, type LessonSlice } from '../features/lessons/lesson-slice.ts';

/** The whole store's state. */
export type PlaygroundState = EditorSlice & PolicySlice & EvaluationSlice & TrainingSlice & ChatSlice & TransferSlice & JudgeSlice & SimulatorSlice & StudioSlice & LessonSlice;

/** Every feature's slice as one state creator (the app's store below; tests build fresh stores from it). */
export const createPlaygroundState: StateCreator<PlaygroundState> = (...args) => ({
  ...createEditorSlice(...args),
  ...createPolicySlice(...args),
  ...createEvaluationSlice(...args),
  ...createTrainingSlice(...args),
  ...createChatSlice(...args),
  ...createTransferSlice(...args),
  ...createJudgeSlice(...args),
  ...createSimulatorSlice(...args),
  ...createStudioSlice(...args),
  ...createLessonSlice(...args),
});

/** The store, without React: `getState`, `setState`, `subscribe`. */
export const playgroundStore = createStore<PlaygroundState>()(createPlaygroundState);

/** Selects part of the store in a component (re-rendering when it changes). */
function selectPlayground<T>(selector: (state: PlaygroundState) => T): T {
  return useStore(playgroundStore, selector);
}

/** The React hook over `playgroundStore`, which also carries the store's own methods (outside React, `usePlayground.getState()`). */
export const usePlayground = Object.assign(selectPlayground, playgroundStore);
