/**
 * The judge slice: which judge the playground lends environments (the Judge card): the offline
 * heuristic (no model: the environment's own stand-in), an OpenAI-compatible endpoint, the WebLLM
 * model, or the in-tab model. Kept under `judge` so that its URL, model and key flag stay apart from
 * the policy's; the endpoint's key itself is never in the store (see judge-key.ts).
 */
import type { StateCreator } from 'zustand';
import type { PlaygroundState } from '../../store/index.ts';

/** Where the judge's verdicts come from. */
export type JudgeKind = 'heuristic' | 'endpoint' | 'webllm' | 'in-tab';

/** The judge's settings. */
export interface JudgeSettings {
  kind: JudgeKind;
  baseURL: string;
  model: string;
  /** Whether a judge API key is stored (its value is never in the store). */
  hasApiKey: boolean;
}

/** Judge state. */
export interface JudgeSlice {
  judge: JudgeSettings;
  setJudgeKind(kind: JudgeKind): void;
  setJudgeEndpoint(endpoint: { baseURL?: string; model?: string }): void;
  setJudgeHasApiKey(hasApiKey: boolean): void;
}

/** The judge before anything is chosen: the offline heuristic, and a local endpoint's defaults. */
const DEFAULT_JUDGE: JudgeSettings = { kind: 'heuristic', baseURL: 'http://localhost:8000/v1', model: 'default', hasApiKey: false };

/** Creates the judge slice. */
export const createJudgeSlice: StateCreator<PlaygroundState, [], [], JudgeSlice> = (set) => ({
  judge: DEFAULT_JUDGE,
  setJudgeKind: (kind) => set((state) => ({ judge: { ...state.judge, kind } })),
  setJudgeEndpoint: (endpoint) => set((state) => ({ judge: { ...state.judge, baseURL: endpoint.baseURL ?? state.judge.baseURL, model: endpoint.model ?? state.judge.model } })),
  setJudgeHasApiKey: (hasApiKey) => set((state) => ({ judge: { ...state.judge, hasApiKey } })),
});
