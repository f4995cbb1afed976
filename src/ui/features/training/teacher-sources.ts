/** The app's warm-up teacher sources (see warmup-teacher.ts), from the store: the built-in's expert, the endpoint with its stored key, the WebLLM model. */
import { OpenAIHttpClient, ScriptedClient } from '../../../envs/index.ts';
import { readApiKey } from '../models/api-key.ts';
import { isBuiltinName, loadBuiltinExpert } from '../environment/builtins.ts';
import { usePlayground } from '../../store/index.ts';
import type { TeacherSources } from './warmup-teacher.ts';
import { webllmClient } from '../models/webllm-actions.ts';

/** The teacher sources for a file that started from `builtin` (if any), with environment arguments `args`. */
export function appTeacherSources(builtin: string | undefined, args: Record<string, unknown>): TeacherSources {
  const { baseURL, model, webllmModel, settings } = usePlayground.getState();
  return {
    ...(isBuiltinName(builtin) ? { expert: async () => new ScriptedClient(await loadBuiltinExpert(builtin, args)) } : {}),
    // The key goes only to the endpoint's URL, never into the sandbox: the sandbox sees answers.
    endpoint: () => new OpenAIHttpClient({ baseURL, apiKey: readApiKey() || undefined, maxRetries: 2 }),
    webllm: webllmClient,
    endpointModel: model,
    endpointURL: baseURL,
    webllmModel,
    concurrency: settings.concurrency,
  };
}
