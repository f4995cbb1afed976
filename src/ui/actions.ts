/**
 * The playground's actions: module-level functions that talk to storage, the sandbox bridge, the
 * policy and the URL, and write results into the store. Components call these; they never talk
 * to workers themselves.
 */
import { OpenAIHttpClient, ScriptedClient, summarizeRollouts, type ChatClient, type RolloutRecord } from '../envs/index.ts';
import { DEFAULT_LESSON_ENVIRONMENT, DEFAULT_LESSON_OPTIONS } from '../rl/lesson.ts';
import { recordsToJsonl } from '../envs/results-record.ts';
import { findRealPreset } from '../workers/model-catalogue.ts';
import { createEngineChatClient } from '../workers/engine-bridge.ts';
import { PauseGate } from '../workers/engine/pause-gate.ts';
import { evaluateInSandbox } from '../workers/sandbox-bridge.ts';
import { readApiKey, writeApiKey } from './api-key.ts';
import { BUILTINS, isBuiltinName, loadBuiltinExpert } from './builtins.ts';
import { compileModel } from './editor/monaco-setup.ts';
import { disposeEnvironmentModel, environmentModel } from './editor/models.ts';
import { pausableClient } from './pausable-client.ts';
import { createIframeSandbox } from './sandbox-frame.ts';
import { decodeShareHash, encodeShareHash, isShareHash, ShareLinkError, type SharedState } from './share/url-state.ts';
import { readStoredSetup, rememberSetup } from './setup-storage.ts';
import { currentEnvironment, parseArgs } from './current-environment.ts';
import * as storage from './storage.ts';
import { downloadFile } from './transfer/download.ts';
import { chooseInTabModel, restoreInTabModel } from './model-actions.ts';
import { usePlayground } from './store/index.ts';
import { chooseWebLLMModel, restoreWebLLMModel, webllmClient } from './webllm-actions.ts';
import { IDLE_RUN, type EvaluationSettings } from './store/evaluation-slice.ts';
import type { PolicyKind } from './store/policy-slice.ts';
import { DEFAULT_TRAINING_SETTINGS } from './store/training-slice.ts';
import { ensureEngine, loadOpenRunWeights, recordEvaluation, refreshRuns } from './training-actions.ts';
import { errorMessage } from '../common/error-message.ts';
import { isEvaluating } from './store/selectors.ts';

const store = usePlayground;

export { currentEnvironment, parseArgs } from './current-environment.ts';
const SAVE_DELAY_MS = 400;
const DEFAULT_BUILTIN = 'reverse-text';
const POLICY_STORAGE = 'tabrl.policy';

let stopController: AbortController | undefined;
/** Closed while the person has paused the evaluation: no new rollout starts. */
const evaluationGate = new PauseGate();
const saveTimers = new Map<string, ReturnType<typeof setTimeout>>();

const newId = () => `env-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

/** Loads saved environments and the endpoint settings, then opens a shared link if the URL has one. */
export async function initPlayground(): Promise<void> {
  restorePolicy();
  restoreInTabModel();
  restoreWebLLMModel();
  // The setup chosen before the reload (by the person or Start lesson); a share link's, once accepted, replaces it.
  const setup = readStoredSetup();
  store.getState().setSettings(setup.settings);
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

/** Opens a share link for review (never runs it); a bad link shows why and loads nothing. */
export function openHash(hash: string): void {
  if (!isShareHash(hash)) return;
  try {
    store.getState().setReview(decodeShareHash(hash));
    store.getState().setShareError(null);
  } catch (error) {
    store.getState().setShareError(error instanceof ShareLinkError ? error.message : `This link could not be opened: ${String(error)}`);
  }
}

/** Starts a new saved environment from a built-in's source and opens it. */
export async function createFromBuiltin(name: string): Promise<void> {
  const builtin = BUILTINS.find((item) => item.name === name) ?? BUILTINS[0];
  if (!builtin) throw new Error('no built-in environments are available');
  const existing = store.getState().environments.filter((item) => item.name === builtin.name || item.name.startsWith(`${builtin.name} (`)).length;
  await addEnvironment({ name: existing === 0 ? builtin.name : `${builtin.name} (${existing + 1})`, source: builtin.source, builtin: builtin.name });
}

async function addEnvironment(fields: { name: string; source: string; builtin?: string }): Promise<string> {
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
  clearTimeout(saveTimers.get(id));
  saveTimers.set(id, setTimeout(() => {
    saveTimers.delete(id);
    const saved = store.getState().environments.find((item) => item.id === id);
    if (!saved || saved.source === source) return;
    const updated = { ...saved, source, updatedAt: Date.now() };
    store.getState().upsertEnvironment(updated);
    void storage.putEnvironment(updated);
  }, SAVE_DELAY_MS));
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


/** The open environment's source as it is in the editor now (saved or not). */
function currentSource(saved: storage.SavedEnvironment): string {
  return environmentModel(saved.id, saved.source).getValue();
}

// ---------------------------------------------------------------- policy

function restorePolicy(): void {
  try {
    const saved = JSON.parse(localStorage.getItem(POLICY_STORAGE) ?? '{}') as { baseURL?: string; model?: string };
    store.getState().setEndpoint(saved);
  } catch {
    // a damaged entry: keep the defaults
  }
}

/** The arguments of the default lesson: reverse-text in its compact form, short enough for the tiny model. */
export const TINY_LESSON_ARGS: Record<string, unknown> = { ...DEFAULT_LESSON_ENVIRONMENT.args };

/** Chooses the policy; picking the in-tab model on reverse-text with default arguments switches to the default lesson's. */
export function choosePolicy(policy: PolicyKind): void {
  store.getState().setPolicy(policy);
  if (policy !== 'in-tab') return;
  const { settings } = store.getState();
  if (currentEnvironment()?.builtin === DEFAULT_LESSON_ENVIRONMENT.name && settings.argsJson.trim() === '{}') {
    store.getState().setSettings({ argsJson: JSON.stringify(TINY_LESSON_ARGS), maxTokens: Math.min(settings.maxTokens, DEFAULT_LESSON_OPTIONS.maxTokens) });
  }
  void ensureEngine().catch(() => {});
}

/** Sets the endpoint's base URL and model name, remembered in localStorage. */
export function setEndpoint(endpoint: { baseURL?: string; model?: string }): void {
  store.getState().setEndpoint(endpoint);
  const { baseURL, model } = store.getState();
  localStorage.setItem(POLICY_STORAGE, JSON.stringify({ baseURL, model }));
}

/** Stores the endpoint's API key in localStorage (never in the store, a link, or the sandbox). */
export function setApiKey(key: string): void {
  writeApiKey(key);
  store.getState().setHasApiKey(key !== '');
}

async function buildPolicyClient(builtin: string | undefined, args: Record<string, unknown>): Promise<{ client: ChatClient; model: string }> {
  const { policy, baseURL, model } = store.getState();
  if (policy === 'expert') {
    if (!isBuiltinName(builtin)) throw new Error('The scripted expert belongs to a built-in environment; this file did not start from one. Choose an endpoint instead.');
    return { client: new ScriptedClient(await loadBuiltinExpert(builtin, args)), model: `expert:${builtin}` };
  }
  if (policy === 'endpoint') return { client: new OpenAIHttpClient({ baseURL, apiKey: readApiKey() || undefined, maxRetries: 2 }), model };
  // WebLLM answers from its own worker on this side of the sandbox: environment code only sees answers.
  if (policy === 'webllm') return { client: await webllmClient(), model: store.getState().webllmModel };
  await ensureEngine();
  await loadOpenRunWeights();
  return { client: createEngineChatClient(), model: store.getState().engine.info?.model ?? 'tiny' };
}

// ---------------------------------------------------------------- evaluation

/** Compiles the open environment and evaluates it in a fresh sandbox against the chosen policy. */
export async function startEvaluation(): Promise<void> {
  const { run, settings } = store.getState();
  if (isEvaluating({ run })) return;
  const saved = currentEnvironment();
  if (!saved) return;
  // Stop works from the first moment: compiling, starting the policy, loading the environment.
  const controller = new AbortController();
  stopController = controller;
  const fail = (failure: string) => {
    store.getState().updateRun({ status: 'failed', failure: controller.signal.aborted ? 'Stopped before the evaluation began; nothing ran.' : failure, finishedAt: Date.now() });
    stopController = undefined;
  };
  store.getState().updateRun({ ...IDLE_RUN, status: 'compiling', startedAt: Date.now() });
  store.getState().selectRecord(0);

  const compiled = await compileModel(environmentModel(saved.id, saved.source));
  if (!compiled.ok) {
    const first = compiled.problems[0]!;
    return fail(`${compiled.problems.length} compile error${compiled.problems.length === 1 ? '' : 's'} — fix ${compiled.problems.length === 1 ? 'it' : 'them'} first. Line ${first.line}: ${first.message}`);
  }
  let args: Record<string, unknown>;
  let policy: { client: ChatClient; model: string };
  try {
    args = parseArgs(settings.argsJson);
    policy = await buildPolicyClient(saved.builtin, args);
  } catch (error) {
    return fail(errorMessage(error));
  }

  if (controller.signal.aborted) return fail('stopped');
  evaluationGate.resume();
  const started = Date.now();
  store.getState().updateRun({ status: 'running', startedAt: started, total: settings.numTasks * settings.rolloutsPerTask });
  try {
    const result = await evaluateInSandbox({
      code: compiled.code,
      label: saved.name,
      args,
      options: {
        numTasks: settings.numTasks,
        rolloutsPerTask: settings.rolloutsPerTask,
        concurrency: settings.concurrency,
        samplingArgs: { max_tokens: settings.maxTokens, temperature: settings.temperature, seed: settings.seed },
        model: policy.model,
      },
      client: pausableClient(policy.client, evaluationGate),
      timeLimitMs: settings.timeLimitMs,
      signal: controller.signal,
      createFrame: createIframeSandbox,
      onLoaded: (environment) => store.getState().updateRun({
        environment,
        total: Math.min(settings.numTasks, environment.numEvaluationTasks) * settings.rolloutsPerTask,
      }),
      onRecord: (record, done, total) => store.getState().updateRun((current) => ({ records: [...current.records, record], done, total })),
    });
    const records = sortRecords(store.getState().run.records);
    const summary = result.summary ?? summarizeRollouts(records, settings.rolloutsPerTask, result.info?.rewardNames ?? []);
    store.getState().updateRun({
      status: 'done',
      records,
      summary,
      stoppedEarly: result.stoppedEarly ?? null,
      finishedAt: Date.now(),
    });
    if (store.getState().policy === 'in-tab' && !result.stoppedEarly) await recordEvaluation(summary);
  } catch (error) {
    const { records, environment } = store.getState().run;
    const sorted = sortRecords(records);
    store.getState().updateRun({
      status: 'failed',
      records: sorted,
      summary: sorted.length > 0 ? summarizeRollouts(sorted, settings.rolloutsPerTask, environment?.rewardNames ?? []) : null,
      failure: errorMessage(error),
      finishedAt: Date.now(),
    });
  } finally {
    stopController = undefined;
    evaluationGate.resume();
    store.getState().updateRun({ pausedAt: undefined });
  }
}

function sortRecords(records: RolloutRecord[]): RolloutRecord[] {
  return [...records].sort((a, b) => a.taskIndex - b.taskIndex || a.rolloutIndex - b.rolloutIndex);
}

/** Stops the running evaluation: rollouts in flight are cancelled and the sandbox is shut down. */
export function stopEvaluation(): void {
  if (!stopController) return;
  store.getState().updateRun({ status: 'stopping' });
  stopController.abort();
}

/** Pauses the running evaluation: no new rollout starts; those under way finish. */
export function pauseEvaluation(): void {
  if (!stopController || store.getState().run.status !== 'running') return;
  evaluationGate.pause();
  store.getState().updateRun({ pausedAt: Date.now() });
}

/** Resumes a paused evaluation (its elapsed time leaves out the pause, so the ETA stays honest). */
export function resumeEvaluation(): void {
  const { pausedAt, startedAt } = store.getState().run;
  if (pausedAt === undefined) return;
  store.getState().updateRun({ pausedAt: undefined, startedAt: startedAt + (Date.now() - pausedAt) });
  evaluationGate.resume();
}

/** The run's records as JSONL, one rollout per line, in the format `tabrl eval` writes results.jsonl (src/envs/results-record.ts). */
export function resultsAsJsonl(): string {
  return recordsToJsonl(store.getState().run.records);
}

/** Downloads the run's records as `<environment>-results.jsonl`. */
export function exportResults(): void {
  const { run } = store.getState();
  downloadFile(`${run.environment?.name ?? 'environment'}-results.jsonl`, resultsAsJsonl(), 'application/x-ndjson');
}

// ---------------------------------------------------------------- share links

/** The playground's setup (policy, mode, settings, seed) around an environment `source`, as a share link or an imported file carries it. */
export function currentSetup(environment: { source: string; name: string; builtin?: string | undefined }): SharedState {
  const { settings, policy, model, baseURL, mode, trainingSettings, webllmModel, teacher, inTabModel } = store.getState();
  return {
    mode,
    training: { ...trainingSettings },
    source: environment.source,
    name: environment.name,
    ...(environment.builtin ? { builtin: environment.builtin } : {}),
    args: safeArgs(settings.argsJson),
    policy,
    model,
    baseURL,
    webllmModel,
    inTabModel,
    teacher,
    numTasks: settings.numTasks,
    rolloutsPerTask: settings.rolloutsPerTask,
    concurrency: settings.concurrency,
    maxTokens: settings.maxTokens,
    temperature: settings.temperature,
    seed: settings.seed,
    timeLimitMs: settings.timeLimitMs,
  };
}

/** The open environment, settings and seed as a share link; it is also put in the address bar. */
export function createShareLink(): string {
  const saved = currentEnvironment();
  if (!saved) return location.href;
  const state = currentSetup({ source: currentSource(saved), name: saved.name, builtin: saved.builtin });
  const url = `${location.origin}${location.pathname}#${encodeShareHash(state)}`;
  history.replaceState(null, '', url);
  return url;
}

function safeArgs(argsJson: string): Record<string, unknown> {
  try {
    return parseArgs(argsJson);
  } catch {
    return {};
  }
}

/** Loads a reviewed link: its file becomes a new saved environment and its settings apply. It does not run. */
export async function acceptReview(): Promise<void> {
  const review = store.getState().review;
  if (!review) return;
  const settings: EvaluationSettings = {
    numTasks: review.numTasks,
    rolloutsPerTask: review.rolloutsPerTask,
    concurrency: review.concurrency,
    maxTokens: review.maxTokens,
    temperature: review.temperature,
    seed: review.seed,
    timeLimitMs: review.timeLimitMs,
    argsJson: JSON.stringify(review.args),
  };
  store.getState().setSettings(settings);
  store.getState().setPolicy(review.policy);
  if (review.mode) store.getState().setMode(review.mode);
  if (review.training) {
    const known = Object.keys(DEFAULT_TRAINING_SETTINGS);
    store.getState().setTrainingSettings(Object.fromEntries(Object.entries(review.training).filter(([key]) => known.includes(key))));
  }
  store.getState().setEndpoint({ baseURL: review.baseURL, model: review.model });
  if (review.webllmModel) chooseWebLLMModel(review.webllmModel);
  if (review.teacher) store.getState().setTeacher(review.teacher);
  if (review.inTabModel && (review.inTabModel === 'tiny' || findRealPreset(review.inTabModel))) chooseInTabModel(review.inTabModel);
  await addEnvironment({ name: `${review.name} (${store.getState().reviewFile ? 'imported' : 'shared'})`, source: review.source, ...(review.builtin ? { builtin: review.builtin } : {}) });
  dismissReview();
}

/** Closes the review without loading anything, and clears the link from the address bar. */
export function dismissReview(): void {
  store.getState().setReview(null);
  store.getState().setReviewFile(null);
  store.getState().setShareError(null);
  history.replaceState(null, '', `${location.pathname}${location.search}`);
}
