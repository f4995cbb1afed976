/**
 * The playground's actions, one module per section — environment files (environment-actions.ts), the
 * policy (policy-actions.ts), evaluation (evaluation-actions.ts), share links (share-actions.ts),
 * the in-tab model's training (training-actions.ts) — and the start-up that ties them together.
 * Components call these; they never talk to workers themselves. This module re-exports the sections
 * so components import actions from one place.
 */
import { readApiKey } from '../features/models/api-key.ts';
import { createFromBuiltin, DEFAULT_BUILTIN } from '../features/environment/environment-actions.ts';
import { restoreJudge } from '../features/judge/judge-actions.ts';
import { restoreInTabModel } from '../features/models/model-actions.ts';
import { restorePolicy } from '../features/policy/policy-actions.ts';
import { readStoredSetup, rememberSetup } from './setup-storage.ts';
import { openHash } from '../features/share/share-actions.ts';
import * as storage from '../features/environment/environment-storage.ts';
import { usePlayground } from '../store/index.ts';
import { ensureEngine, refreshRuns } from '../features/training/training-actions.ts';
import { restoreWebLLMModel } from '../features/models/webllm-actions.ts';

export { currentEnvironment, parseArgs } from '../features/environment/current-environment.ts';
export { createFromBuiltin, deleteCurrentEnvironment, editSource, openEnvironment, renameCurrentEnvironment } from '../features/environment/environment-actions.ts';
export { exportResults, pauseEvaluation, resultsAsJsonl, resumeEvaluation, startEvaluation, stopEvaluation } from '../features/evaluation/evaluation-actions.ts';
export { choosePolicy, setApiKey, setEndpoint } from '../features/policy/policy-actions.ts';
export { acceptReview, createShareLink, currentSetup, dismissReview, openHash, reviewEndpointChanges } from '../features/share/share-actions.ts';

const store = usePlayground;

/** Loads saved environments and the endpoint settings, then opens a shared link if the URL has one. */
export async function initPlayground(): Promise<void> {
  restorePolicy();
  restoreInTabModel();
  restoreWebLLMModel();
  restoreJudge();
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
