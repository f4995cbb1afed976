/**
 * The simulator slice: which tool simulator the tab lends environments with simulated tools (the
 * Studio's Simulated tools card): the offline heuristic (the scripted nearest-record simulator: the
 * environment's own default, nothing lent), the Judge card's model, the Policy card's model, or an
 * OpenAI-compatible endpoint of its own. Kept under `simulator`, beside the judge's settings, whose
 * lending it follows; the endpoint's key itself is never in the store (see simulator-key.ts).
 */
import type { StateCreator } from 'zustand';
import type { PlaygroundState } from '../../store/index.ts';

/** Where the simulated tools' results come from. */
export type SimulatorKind = 'heuristic' | 'judge' | 'policy' | 'endpoint';

/** The simulator's settings. */
export interface SimulatorSettings {
  kind: SimulatorKind;
  baseURL: string;
  model: string;
  /** Whether a simulator API key is stored (its value is never in the store). */
  hasApiKey: boolean;
}

/** Simulator state. */
export interface SimulatorSlice {
  simulator: SimulatorSettings;
  setSimulatorKind(kind: SimulatorKind): void;
  setSimulatorEndpoint(endpoint: { baseURL?: string; model?: string }): void;
  setSimulatorHasApiKey(hasApiKey: boolean): void;
}

/** The simulator before anything is chosen: the offline heuristic, and a local endpoint's defaults. */
const DEFAULT_SIMULATOR: SimulatorSettings = { kind: 'heuristic', baseURL: 'http://localhost:8000/v1', model: 'default', hasApiKey: false };

/** Creates the simulator slice. */
export const createSimulatorSlice: StateCreator<PlaygroundState, [], [], SimulatorSlice> = (set) => ({
  simulator: DEFAULT_SIMULATOR,
  setSimulatorKind: (kind) => set((state) => ({ simulator: { ...state.simulator, kind } })),
  setSimulatorEndpoint: (endpoint) => set((state) => ({ simulator: { ...state.simulator, baseURL: endpoint.baseURL ?? state.simulator.baseURL, model: endpoint.model ?? state.simulator.model } })),
  setSimulatorHasApiKey: (hasApiKey) => set((state) => ({ simulator: { ...state.simulator, hasApiKey } })),
});
