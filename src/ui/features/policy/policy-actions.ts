/**
 * The policy's actions: choose it, the endpoint's URL, model and key (the key only in localStorage),
 * and the chat client an evaluation uses for the chosen policy.
 */
import { OpenAIHttpClient, ScriptedClient, type ChatClient } from '../../../envs/index.ts';
import { DEFAULT_LESSON_ENVIRONMENT, DEFAULT_LESSON_OPTIONS } from '../../../rl/lesson.ts';
import { createEngineChatClient } from '../../../workers/engine-bridge.ts';
import { readApiKey, writeApiKey } from '../models/api-key.ts';
import { isBuiltinName, loadBuiltinExpert } from '../environment/builtins.ts';
import { currentEnvironment } from '../environment/current-environment.ts';
import { usePlayground } from '../../store/index.ts';
import type { PolicyKind } from './policy-slice.ts';
import { ensureEngine, loadOpenRunWeights } from '../training/training-actions.ts';
import { webllmClient } from '../models/webllm-actions.ts';

const store = usePlayground;
const POLICY_STORAGE = 'tabrl.policy';

/** Reads the endpoint's base URL and model back from localStorage. */
export function restorePolicy(): void {
  try {
    const saved = JSON.parse(localStorage.getItem(POLICY_STORAGE) ?? '{}') as { baseURL?: string; model?: string };
    store.getState().setEndpoint(saved);
  } catch {
    // a damaged entry: keep the defaults
  }
}

// The arguments of the default lesson: reverse-text in its compact form, short enough for the byte-level models (nano, tiny).
const BYTE_MODEL_LESSON_ARGS: Record<string, unknown> = { ...DEFAULT_LESSON_ENVIRONMENT.args };

/** Chooses the policy; picking the in-tab model on reverse-text with default arguments switches to the default lesson's. */
export function choosePolicy(policy: PolicyKind): void {
  store.getState().setPolicy(policy);
  if (policy !== 'in-tab') return;
  const { settings } = store.getState();
  if (currentEnvironment()?.builtin === DEFAULT_LESSON_ENVIRONMENT.name && settings.argsJson.trim() === '{}') {
    store.getState().setSettings({ argsJson: JSON.stringify(BYTE_MODEL_LESSON_ARGS), maxTokens: Math.min(settings.maxTokens, DEFAULT_LESSON_OPTIONS.maxTokens) });
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

/** The chat client and model name of the chosen policy (starting the in-tab engine, with the open run's weights, when it is the policy). */
export async function buildPolicyClient(builtin: string | undefined, args: Record<string, unknown>): Promise<{ client: ChatClient; model: string }> {
  const { policy, baseURL, model } = store.getState();
  if (policy === 'expert') {
    if (!isBuiltinName(builtin))
      throw new Error(
        'The scripted expert belongs to a built-in environment; this file did not start from one. Choose the in-tab model (offline), a WebLLM model or an endpoint in the Policy card instead.',
      );
    return { client: new ScriptedClient(await loadBuiltinExpert(builtin, args)), model: `expert:${builtin}` };
  }
  if (policy === 'endpoint') return { client: new OpenAIHttpClient({ baseURL, apiKey: readApiKey() || undefined, maxRetries: 2 }), model };
  // WebLLM answers from its own worker on this side of the sandbox: environment code only sees answers.
  if (policy === 'webllm') return { client: await webllmClient(), model: store.getState().webllmModel };
  await ensureEngine();
  await loadOpenRunWeights();
  return { client: createEngineChatClient(), model: store.getState().engine.info?.model ?? 'tiny' };
}
