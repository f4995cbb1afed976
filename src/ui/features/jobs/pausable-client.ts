/**
 * A policy client that a paused job can hold: a rollout's first model call (a request with no
 * assistant turn yet, i.e. a rollout that has not started talking to the model) waits while the gate
 * is closed, so a paused evaluation starts no new rollouts, while the calls of rollouts already under
 * way go through and those rollouts finish. Waiting for the model does not count against the
 * sandbox's time limits.
 */
import type { ChatClient } from '../../../envs/index.ts';
import type { PauseGate } from '../../../workers/engine/pause-gate.ts';

/** `client` with each rollout's first call held while `gate` is paused (or until the request is aborted). */
export function pausableClient(client: ChatClient, gate: PauseGate): ChatClient {
  return {
    chat: {
      completions: {
        async create(request) {
          if (!request.messages.some((message) => message.role === 'assistant')) await gate.wait(request.signal);
          return client.chat.completions.create(request);
        },
      },
    },
  };
}
