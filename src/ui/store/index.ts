/**
 * The playground's one zustand store, built from slices (zustand's slices pattern). Components
 * select the narrowest field they render; actions that talk to workers, storage or the URL are
 * module-level functions in ../actions.ts, not store methods.
 */
import { create } from 'zustand';
import { createChatSlice, type ChatSlice } from './chat-slice.ts';
import { createEditorSlice, type EditorSlice } from './editor-slice.ts';
import { createEvaluationSlice, type EvaluationSlice } from './evaluation-slice.ts';
import { createPolicySlice, type PolicySlice } from './policy-slice.ts';
import { createTrainingSlice, type TrainingSlice } from './training-slice.ts';
import { createTransferSlice, type TransferSlice } from './transfer-slice.ts';

/** The whole store's state. */
export type PlaygroundState = EditorSlice & PolicySlice & EvaluationSlice & TrainingSlice & ChatSlice & TransferSlice;

/** The store hook; outside React use `usePlayground.getState()`. */
export const usePlayground = create<PlaygroundState>()((...args) => ({
  ...createEditorSlice(...args),
  ...createPolicySlice(...args),
  ...createEvaluationSlice(...args),
  ...createTrainingSlice(...args),
  ...createChatSlice(...args),
  ...createTransferSlice(...args),
}));
