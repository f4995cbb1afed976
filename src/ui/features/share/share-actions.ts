/**
 * Share links and imported setups: open a link for review (never run it), the playground's setup as
 * one object (links and imported files copy it), make a link, and load or dismiss a reviewed one.
 */
import { errorMessage } from '../../../common/error-message.ts';
import type { SavedEnvironment } from '../environment/environment-storage.ts';
import { currentEnvironment, parseArgs } from '../environment/current-environment.ts';
import { environmentModel } from '../environment/editor-models.ts';
import { addEnvironment } from '../environment/environment-actions.ts';
import { chooseJudge, setJudgeEndpoint } from '../judge/judge-actions.ts';
import { chooseSimulator, setSimulatorEndpoint } from '../judge/simulator-actions.ts';
import { chooseInTabModel, isInTabModelId } from '../models/model-actions.ts';
import { endpointChangesNeedingConsent, type EndpointChange } from './endpoint-consent.ts';
import { decodeShareHash, encodeShareHash, isShareHash, ShareLinkError, type SharedEvaluation, type SharedState } from './url-state.ts';
import type { EvaluationSettings } from '../evaluation/evaluation-slice.ts';
import { usePlayground } from '../../store/index.ts';
import { knownKnobValues } from '../../../rl/training-settings.ts';
import { chooseWebLLMModel } from '../models/webllm-actions.ts';

const store = usePlayground;

/** Opens a share link for review (never runs it); a bad link shows why and loads nothing. */
export function openHash(hash: string): void {
  if (!isShareHash(hash)) return;
  try {
    store.getState().setReview(decodeShareHash(hash));
    store.getState().setShareError(null);
  } catch (error) {
    store.getState().setShareError(error instanceof ShareLinkError ? error.message : `This link could not be opened: ${errorMessage(error)}`);
  }
}

/** The open environment's source as it is in the editor now (saved or not). */
function currentSource(saved: SavedEnvironment): string {
  return environmentModel(saved.id, saved.source).getValue();
}

/** The playground's setup (policy, mode, settings, seed) around an environment `source`, as a share link or an imported file carries it. */
export function currentSetup(environment: { source: string; name: string; builtin?: string | undefined }): SharedState {
  const { settings, policy, model, baseURL, mode, trainingSettings, webllmModel, teacher, inTabModel } = store.getState();
  const { judge, simulator } = usePlayground.getState();
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
    judgeKind: judge.kind,
    judgeBaseURL: judge.baseURL,
    judgeModel: judge.model,
    simulatorKind: simulator.kind,
    simulatorBaseURL: simulator.baseURL,
    simulatorModel: simulator.model,
    evaluation: sharedEvaluation(settings),
  };
}

/** The evaluation settings a setup carries (the arguments travel beside them as an object). */
function sharedEvaluation(settings: EvaluationSettings): SharedEvaluation {
  const { argsJson: _args, ...evaluation } = settings;
  return evaluation;
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

/** The endpoint URLs the link under review would take a stored API key to; the review asks before applying them. */
export function reviewEndpointChanges(): EndpointChange[] {
  const review = store.getState().review;
  if (!review) return [];
  const { baseURL, hasApiKey } = store.getState();
  const { judge, simulator } = usePlayground.getState();
  return endpointChangesNeedingConsent(review, {
    baseURL,
    hasApiKey,
    judgeBaseURL: judge.baseURL,
    judgeHasApiKey: judge.hasApiKey,
    simulatorBaseURL: simulator.baseURL,
    simulatorHasApiKey: simulator.hasApiKey,
  });
}

/**
 * Loads a reviewed link: its file becomes a new saved environment and its settings apply. It does
 * not run. An endpoint URL that would take a stored key elsewhere (`reviewEndpointChanges`) applies
 * only with `useLinkEndpoints`; otherwise that endpoint (URL and model) stays the person's own.
 */
export async function acceptReview(options: { useLinkEndpoints?: boolean } = {}): Promise<void> {
  const review = store.getState().review;
  if (!review) return;
  const held = options.useLinkEndpoints ? [] : reviewEndpointChanges().map((change) => change.role);
  store.getState().setPolicy(review.policy);
  if (review.mode) store.getState().setMode(review.mode);
  if (review.training) {
    // Only knobs of the table with allowed values (a link from another version may differ).
    store.getState().setTrainingSettings(knownKnobValues(review.training));
  }
  if (!held.includes('policy')) store.getState().setEndpoint({ baseURL: review.baseURL, model: review.model });
  if (review.judgeKind) chooseJudge(review.judgeKind);
  if (review.judgeBaseURL !== undefined && !held.includes('judge')) setJudgeEndpoint({ baseURL: review.judgeBaseURL, ...(review.judgeModel !== undefined ? { model: review.judgeModel } : {}) });
  // The tool simulator: the kind, URL and model travel; its key never does (a held URL keeps the person's own endpoint).
  if (review.simulatorKind) chooseSimulator(review.simulatorKind);
  if (review.simulatorBaseURL !== undefined && !held.includes('simulator'))
    setSimulatorEndpoint({ baseURL: review.simulatorBaseURL, ...(review.simulatorModel !== undefined ? { model: review.simulatorModel } : {}) });
  if (review.webllmModel) chooseWebLLMModel(review.webllmModel);
  if (review.teacher) store.getState().setTeacher(review.teacher);
  // A link or setup from before the choice existed meant tiny, then the only in-tab model (the default is nano now).
  const inTabModel = review.inTabModel ?? 'tiny';
  if (isInTabModelId(inTabModel)) chooseInTabModel(inTabModel);
  await addEnvironment({ name: `${review.name} (${store.getState().reviewFile ? 'imported' : 'shared'})`, source: review.source, ...(review.builtin ? { builtin: review.builtin } : {}) });
  // After the file opens: its arguments belong to it.
  const settings: EvaluationSettings = { ...review.evaluation, argsJson: JSON.stringify(review.args) };
  store.getState().setSettings(settings);
  dismissReview();
}

/** Closes the review without loading anything, and clears the link from the address bar. */
export function dismissReview(): void {
  store.getState().setReview(null);
  store.getState().setReviewFile(null);
  store.getState().setShareError(null);
  history.replaceState(null, '', `${location.pathname}${location.search}`);
}
