/** The policy slice: which model answers the environment's requests (the key itself lives in api-key.ts, not here). */
import type { StateCreator } from 'zustand';
import type { PlaygroundState } from './index.ts';

/** Where completions come from: a built-in's scripted expert, an OpenAI-compatible endpoint, or (later) the in-tab model. */
export type PolicyKind = 'expert' | 'endpoint' | 'in-tab';

/** Policy state. */
export interface PolicySlice {
  policy: PolicyKind;
  baseURL: string;
  model: string;
  /** Whether an API key is stored (its value is never in the store). */
  hasApiKey: boolean;
  /** Which model the in-tab engine runs: 'tiny' (from scratch), a real preset's id (see src/gpu/inference/presets.ts), or 'local' (files the person picked). */
  inTabModel: string;
  setPolicy(policy: PolicyKind): void;
  setEndpoint(endpoint: { baseURL?: string; model?: string }): void;
  setHasApiKey(hasApiKey: boolean): void;
  setInTabModel(inTabModel: string): void;
}

/** Creates the policy slice. */
export const createPolicySlice: StateCreator<PlaygroundState, [], [], PolicySlice> = (set) => ({
  policy: 'expert',
  baseURL: 'http://localhost:8000/v1',
  model: 'default',
  hasApiKey: false,
  inTabModel: 'tiny',
  setPolicy: (policy) => set({ policy }),
  setEndpoint: (endpoint) => set((state) => ({ baseURL: endpoint.baseURL ?? state.baseURL, model: endpoint.model ?? state.model })),
  setHasApiKey: (hasApiKey) => set({ hasApiKey }),
  setInTabModel: (inTabModel) => set({ inTabModel }),
});
