/**
 * Model calls that cross the isolation boundary, both ends: beside environment code, a `ChatClient`
 * whose calls go out as plain requests (`relayedClient`: the browser sandbox's worker and the CLI's
 * QuickJS guest alike); in the host, the real client's answer turned into a plain
 * `CompletionOutcome` (`answerCall`, the page's half). The policy's calls and the judge's calls use
 * the same two halves, so an error keeps its kind and status on the way back, and no key, signal or
 * class instance ever crosses.
 */
import { ChatClientError, type ChatClient, type ChatRequest } from '../envs/index.ts';
import { errorMessage } from '../common/error-message.ts';
import type { CompletionOutcome, SandboxChatRequest } from './protocol.ts';

/** Environment side: a chat client whose every call is handed to `send` (which crosses to the host) as plain data. */
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

/**
 * Host side: asks `client` and returns its completion, or its error as plain data (a non-client error
 * becomes 'bad_response'). When `signal` aborts, the answer is 'aborted' at once, whether or not the
 * client has let go of the call yet (a busy in-tab model may take seconds to reach a cancel), so a
 * stopped rollout in the sandbox ends without waiting for it.
 */
export async function answerCall(client: ChatClient, request: SandboxChatRequest, signal: AbortSignal): Promise<CompletionOutcome> {
  const aborted: CompletionOutcome = { ok: false, message: 'the request was cancelled', kind: 'aborted' };
  if (signal.aborted) return aborted;
  let onAbort = () => {};
  const abortedNow = new Promise<CompletionOutcome>((resolve) => {
    onAbort = () => resolve(aborted);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    const call = client.chat.completions.create({ ...request, signal }).then((completion): CompletionOutcome => ({ ok: true, completion }));
    // The call may still fail after the abort answered for it: nobody is waiting for it then.
    call.catch(() => {});
    return await Promise.race([call, abortedNow]);
  } catch (error) {
    if (error instanceof ChatClientError) return { ok: false, message: error.message, kind: error.kind, ...(error.status !== undefined ? { status: error.status } : {}) };
    return { ok: false, message: errorMessage(error), kind: 'bad_response' };
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
