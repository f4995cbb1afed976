/** The policy slice: which model answers the environment's requests (the key itself lives in api-key.ts, not here). */
import type { StateCreator } from 'zustand';
import { DEFAULT_LESSON_MODEL } from '../../../rl/lesson.ts';
import type { PlaygroundState } from '../../store/index.ts';

/** Where completions come from: a built-in's scripted expert, an OpenAI-compatible endpoint, the in-tab model, or a WebLLM model. */
export type PolicyKind = 'expert' | 'endpoint' | 'in-tab' | 'webllm';

/** Who makes the warm-up's demonstrations: the built-in's expert, the endpoint, or the WebLLM model (the in-tab model is the student). */
export type TeacherKind = 'expert' | 'endpoint' | 'webllm';

/** The WebLLM model's load state, shown in its fields. */
export interface WebLLMStatus {
  status: 'idle' | 'loading' | 'ready' | 'failed';
  /** Load progress, 0..1, and WebLLM's text about it. */
  progress: number;
  text: string;
  error: string | null;
  /** The model now loaded in the WebLLM worker, if any. */
  loadedModel: string | null;
}

/** The WebLLM model picked by default: small, and needs no shader-f16. */
const DEFAULT_WEBLLM_MODEL = 'SmolLM2-360M-Instruct-q4f32_1-MLC';

/** Where loading the in-tab model is: idle, downloading/building (with bytes done and total), or failed with a message. */
export interface ModelLoadState {
  status: 'idle' | 'loading' | 'failed';
  /** The model being loaded (an inTabModel value). */
  target: string | null;
  /** Bytes done and total over all its files (total 0 until the first answer). */
  loaded: number;
  total: number;
  error: string | null;
}

/** Policy state. */
export interface PolicySlice {
  policy: PolicyKind;
  baseURL: string;
  model: string;
  /** Whether an API key is stored (its value is never in the store). */
  hasApiKey: boolean;
  /** Which model the in-tab engine runs: a shipped model's id ('nano', the default, or 'nano-2m': pretrained, shipped with the app, src/models/shipped-models.ts), 'tiny' (from scratch), a real preset's id (src/models/catalogue.ts), or 'local' (files the person picked). */
  inTabModel: string;
  /** Loading the in-tab model (the model picker's progress bar and errors). */
  modelLoad: ModelLoadState;
  /** Which real presets are completely in the browser's cache, by id. */
  cachedModels: Record<string, boolean>;
  /** The WebLLM prebuilt model id the webllm policy (and teacher) uses. */
  webllmModel: string;
  webllm: WebLLMStatus;
  teacher: TeacherKind;
  setPolicy(policy: PolicyKind): void;
  setEndpoint(endpoint: { baseURL?: string; model?: string }): void;
  setHasApiKey(hasApiKey: boolean): void;
  setInTabModel(inTabModel: string): void;
  setModelLoad(update: Partial<ModelLoadState>): void;
  setCachedModels(cached: Record<string, boolean>): void;
  setWebLLMModel(webllmModel: string): void;
  setWebLLM(update: Partial<WebLLMStatus>): void;
  setTeacher(teacher: TeacherKind): void;
}

/** Creates the policy slice. */
export const createPolicySlice: StateCreator<PlaygroundState, [], [], PolicySlice> = (set) => ({
  policy: 'expert',
  baseURL: 'http://localhost:8000/v1',
  model: 'default',
  hasApiKey: false,
  inTabModel: DEFAULT_LESSON_MODEL,
  modelLoad: { status: 'idle', target: null, loaded: 0, total: 0, error: null },
  cachedModels: {},
  webllmModel: DEFAULT_WEBLLM_MODEL,
  webllm: { status: 'idle', progress: 0, text: '', error: null, loadedModel: null },
  teacher: 'expert',
  setPolicy: (policy) => set({ policy }),
  setEndpoint: (endpoint) => set((state) => ({ baseURL: endpoint.baseURL ?? state.baseURL, model: endpoint.model ?? state.model })),
  setHasApiKey: (hasApiKey) => set({ hasApiKey }),
  setInTabModel: (inTabModel) => set({ inTabModel }),
  setModelLoad: (update) => set((state) => ({ modelLoad: { ...state.modelLoad, ...update } })),
  setCachedModels: (cached) => set({ cachedModels: cached }),
  setWebLLMModel: (webllmModel) => set({ webllmModel }),
  setWebLLM: (update) => set((state) => ({ webllm: { ...state.webllm, ...update } })),
  setTeacher: (teacher) => set({ teacher }),
});
