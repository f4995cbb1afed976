/**
 * The start-up that ties the features together: it restores each feature's remembered choices
 * (policy, in-tab model, WebLLM model, judge, the setup), opens the saved environments (making the
 * default one on a first visit) and a share link in the URL. Only the app imports it; the features'
 * actions live in their own folders (features/<name>/<name>-actions.ts), and components import them there.
 */
import { readApiKey } from '../features/models/api-key.ts';
import { createFromBuiltin, DEFAULT_BUILTIN } from '../features/environment/environment-actions.ts';
import { restoreJudge } from '../features/judge/judge-actions.ts';
import { restoreSimulator } from '../features/judge/simulator-actions.ts';
import { restoreInTabModel } from '../features/models/model-actions.ts';
import { restorePolicy } from '../features/policy/policy-actions.ts';
import { readStoredSetup, rememberSetup } from './setup-storage.ts';
import { openHash } from '../features/share/share-actions.ts';
import * as storage from '../features/environment/environment-storage.ts';
import { usePlayground } from '../store/index.ts';
import { ensureEngine, refreshRuns } from '../features/training/training-actions.ts';
import { restoreWebLLMModel } from '../features/models/webllm-actions.ts';

const store = usePlayground;

/** Loads saved environments and the endpoint settings, then opens a shared link if the URL has one. */
export async function initPlayground(): Promise<void> {
  restorePolicy();
  restoreInTabModel();
  restoreWebLLMModel();
  restoreJudge();
  restoreSimulator();
  // The setup chosen before the reload (by the person or Start lesson); a share link's, once accepted, replaces it.
  const setup = readStoredSetup();
  store.getState().setSettings(setup.settings);
  store.getState().setArgsByEnvironment(setup.argsByEnvironment);
  store.getState().setTrainingSettings(setup.trainingSettings);
  if (setup.mode) store.getState().setMode(setup.mode);
  if (setup.policy) store.getState().setPolicy(setup.policy);
  rememberSetup(store);
  store.getState().setHasApiKey(readApiKey() !== '');
  let environments = await storage.listEnvironments();
  if (environments.length === 0) {
    await createFromBuiltin(DEFAULT_BUILTIN);
    environments = await storage.listEnvironments();
  }
  store.getState().setEnvironments(environments);
  if (!store.getState().currentId) store.getState().setCurrentId(environments[0]?.id ?? null);
  openHash(location.hash);
  window.addEventListener('hashchange', () => openHash(location.hash));
  await refreshRuns();
  // The in-tab model was the policy before the reload: start it (the chosen model comes from the browser's cache).
  if (setup.policy === 'in-tab') void ensureEngine().catch(() => {});
}
