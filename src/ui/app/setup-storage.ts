/**
 * The run panel's setup remembered across reloads (localStorage `tabrl.setup`): the evaluation
 * settings, each environment file's arguments, the warm-up and GRPO settings, the mode and the policy
 * — what the person or Start lesson chose. Values are checked against the defaults' keys and types
 * when read back, so a damaged or older entry changes nothing it does not know.
 */
import type { StoreApi } from 'zustand';
import type { PlaygroundState } from '../store/index.ts';
import { DEFAULT_SETTINGS, type EvaluationSettings } from '../features/evaluation/evaluation-slice.ts';
import type { PolicyKind } from '../features/policy/policy-slice.ts';
import type { RunMode, TrainingSettings } from '../features/training/training-slice.ts';
import { knownKnobValues } from '../../rl/training-settings.ts';

const KEY = 'tabrl.setup';
const MODES: readonly RunMode[] = ['evaluate', 'warmup', 'train'];
const POLICIES: readonly PolicyKind[] = ['expert', 'endpoint', 'in-tab', 'webllm'];

/** What is remembered. */
export interface StoredSetup {
  settings: Partial<EvaluationSettings>;
  /** Each file's arguments JSON, by environment id. */
  argsByEnvironment: Record<string, string>;
  trainingSettings: Partial<TrainingSettings>;
  mode?: RunMode;
  policy?: PolicyKind;
}

/** The fields of `value` whose names and types match `defaults`'. */
function known<T extends object>(value: unknown, defaults: T): Partial<T> {
  if (typeof value !== 'object' || value === null) return {};
  const out: Partial<T> = {};
  for (const [key, fallback] of Object.entries(defaults)) {
    const item = (value as Record<string, unknown>)[key];
    if (typeof item === typeof fallback && (typeof item !== 'number' || Number.isFinite(item))) (out as Record<string, unknown>)[key] = item;
  }
  return out;
}

/** The entries of `value` that are strings (an object of anything else gives none). */
function stringValues(value: unknown): Record<string, string> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
  return Object.fromEntries(Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
}

/** The remembered setup, checked (empty when there is none or it is damaged). */
export function readStoredSetup(storage: Pick<Storage, 'getItem'> = localStorage): StoredSetup {
  let raw: unknown;
  try {
    raw = JSON.parse(storage.getItem(KEY) ?? 'null');
  } catch {
    raw = null;
  }
  const entry = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  return {
    settings: known(entry.settings, DEFAULT_SETTINGS),
    argsByEnvironment: stringValues(entry.argsByEnvironment),
    trainingSettings: knownKnobValues(entry.trainingSettings),
    ...(MODES.includes(entry.mode as RunMode) ? { mode: entry.mode as RunMode } : {}),
    ...(POLICIES.includes(entry.policy as PolicyKind) ? { policy: entry.policy as PolicyKind } : {}),
  };
}

/** Saves the setup whenever it changes; returns the unsubscribe function. */
export function rememberSetup(store: Pick<StoreApi<PlaygroundState>, 'subscribe'>, storage: Pick<Storage, 'setItem'> = localStorage): () => void {
  return store.subscribe((state, previous) => {
    if (
      state.settings === previous.settings &&
      state.argsByEnvironment === previous.argsByEnvironment &&
      state.trainingSettings === previous.trainingSettings &&
      state.mode === previous.mode &&
      state.policy === previous.policy
    )
      return;
    const setup: StoredSetup = { settings: state.settings, argsByEnvironment: state.argsByEnvironment, trainingSettings: state.trainingSettings, mode: state.mode, policy: state.policy };
    try {
      storage.setItem(KEY, JSON.stringify(setup));
    } catch {
      // A full or blocked storage: the setup is simply not remembered.
    }
  });
}
