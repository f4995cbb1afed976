/**
 * Model calls that cross the sandbox boundary, both ends: in the sandbox, a `ChatClient` whose
 * calls go out as plain requests (`relayedClient`); in the app, the real client's answer turned
 * into a plain `CompletionOutcome` (`answerCall`). The policy's calls and the judge's calls use the
 * same two halves, so an error keeps its kind and status on the way back, and no key, signal or
 * class instance ever crosses.
 */
import { ChatClientError, type ChatClient, type ChatRequest } from '../../envs/index.ts';
import { errorMessage } from '../../common/error-message.ts';
import type { CompletionOutcome, SandboxChatRequest } from './protocol.ts';

/** Sandbox side: a chat client whose every call is handed to `send` (which crosses to the app) as plain data. */
export function relayedClient(send: (request: SandboxChatRequest) => Promise<CompletionOutcome>): ChatClient {
  return {
    chat: {
      completions: {
        async create(request: ChatRequest) {
          const { signal, ...plain } = request;
          if (signal?.aborted) throw new ChatClientError('the request was cancelled', 'aborted');
          const outcome = await send(plain);
          if (outcome.ok) return outcome.completion;
          throw new ChatClientError(outcome.message, outcome.kind, outcome.status);
        },
      },
    },
  };
}

/** App side: asks `client` and returns its completion, or its error as plain data (a non-client error becomes 'bad_response'). */
export async function answerCall(client: ChatClient, request: SandboxChatRequest, signal: AbortSignal): Promise<CompletionOutcome> {
  try {
    return { ok: true, completion: await client.chat.completions.create({ ...request, signal }) };
  } catch (error) {
    if (error instanceof ChatClientError) return { ok: false, message: error.message, kind: error.kind, ...(error.status !== undefined ? { status: error.status } : {}) };
    return { ok: false, message: errorMessage(error), kind: 'bad_response' };
  }
}
