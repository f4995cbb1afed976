/**
 * Which judge the playground lends environments (the Judge card): the offline heuristic (no model:
 * the environment's own stand-in), an OpenAI-compatible endpoint, the WebLLM model, or the in-tab
 * model. Its own small store, so the judge's settings stay apart from the policy's; the endpoint's
 * key is never here (see judge-key.ts).
 */
import { useStore } from 'zustand';
import { createStore } from 'zustand/vanilla';

/** Where the judge's verdicts come from. */
export type JudgeKind = 'heuristic' | 'endpoint' | 'webllm' | 'in-tab';

/** The judge's settings. */
export interface JudgeState {
  kind: JudgeKind;
  baseURL: string;
  model: string;
  /** Whether a judge API key is stored (its value is never in the store). */
  hasApiKey: boolean;
  setKind(kind: JudgeKind): void;
  setEndpoint(endpoint: { baseURL?: string; model?: string }): void;
  setHasApiKey(hasApiKey: boolean): void;
}

/** The judge store, without React. */
export const judgeStore = createStore<JudgeState>()((set) => ({
  kind: 'heuristic',
  baseURL: 'http://localhost:8000/v1',
  model: 'default',
  hasApiKey: false,
  setKind: (kind) => set({ kind }),
  setEndpoint: (endpoint) => set((state) => ({ baseURL: endpoint.baseURL ?? state.baseURL, model: endpoint.model ?? state.model })),
  setHasApiKey: (hasApiKey) => set({ hasApiKey }),
}));

/** The React hook over `judgeStore` (outside React, `useJudge.getState()`). */
export const useJudge = Object.assign(<T>(selector: (state: JudgeState) => T): T => useStore(judgeStore, selector), judgeStore);
