/**
 * The environment files' actions: start one from a built-in, add, open, edit (saved shortly after
 * typing stops), rename and delete, in IndexedDB (storage.ts) and the store.
 */
import { actionState } from '../../store/action-state.ts';
import { BUILTINS } from './builtins.ts';
import { disposeEnvironmentModel } from './editor-models.ts';
import { currentEnvironment } from './current-environment.ts';
import * as storage from './environment-storage.ts';
import { usePlayground } from '../../store/index.ts';

const store = usePlayground;
const SAVE_DELAY_MS = 400;
/** The built-in a first visit opens. */
export const DEFAULT_BUILTIN = 'reverse-text';
/** The debounced saves pending, by environment id (see action-state.ts). */
const saves = actionState(() => ({ timers: new Map<string, ReturnType<typeof setTimeout>>() }));

const newId = () => `env-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

/** Starts a new saved environment from a built-in's source and opens it. */
export async function createFromBuiltin(name: string): Promise<void> {
  const builtin = BUILTINS.find((item) => item.name === name) ?? BUILTINS[0];
  if (!builtin) throw new Error('no built-in environments are available');
  const existing = store.getState().environments.filter((item) => item.name === builtin.name || item.name.startsWith(`${builtin.name} (`)).length;
  await addEnvironment({ name: existing === 0 ? builtin.name : `${builtin.name} (${existing + 1})`, source: builtin.source, builtin: builtin.name });
}

/** Saves a new environment file and opens it; returns its id. */
export async function addEnvironment(fields: { name: string; source: string; builtin?: string }): Promise<string> {
  const environment: storage.SavedEnvironment = { id: newId(), ...fields, updatedAt: Date.now() };
  await storage.putEnvironment(environment);
  store.getState().upsertEnvironment(environment);
  store.getState().setCurrentId(environment.id);
  return environment.id;
}

/** Opens a saved environment in the editor. */
export function openEnvironment(id: string): void {
  store.getState().setCurrentId(id);
}

/** Records an edit of environment `id`; it is saved to IndexedDB shortly after typing stops. */
export function editSource(id: string, source: string): void {
  clearTimeout(saves.timers.get(id));
  saves.timers.set(
    id,
    setTimeout(() => {
      saves.timers.delete(id);
      const saved = store.getState().environments.find((item) => item.id === id);
      if (!saved || saved.source === source) return;
      const updated = { ...saved, source, updatedAt: Date.now() };
      store.getState().upsertEnvironment(updated);
      void storage.putEnvironment(updated);
    }, SAVE_DELAY_MS),
  );
}

/** Renames the open environment. */
export async function renameCurrentEnvironment(name: string): Promise<void> {
  const saved = currentEnvironment();
  if (!saved || !name.trim()) return;
  const updated = { ...saved, name: name.trim(), updatedAt: Date.now() };
  store.getState().upsertEnvironment(updated);
  await storage.putEnvironment(updated);
}

/** Deletes the open environment and opens the next one (or a fresh built-in). */
export async function deleteCurrentEnvironment(): Promise<void> {
  const saved = currentEnvironment();
  if (!saved) return;
  await storage.deleteEnvironment(saved.id);
  store.getState().removeEnvironment(saved.id);
  disposeEnvironmentModel(saved.id);
  const next = store.getState().environments[0];
  if (next) store.getState().setCurrentId(next.id);
  else await createFromBuiltin(DEFAULT_BUILTIN);
}
