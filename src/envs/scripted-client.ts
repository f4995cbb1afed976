/**
 * A scripted policy for tests and demos: a function from the conversation to the next reply.
 * It drives full multi-turn rollouts without a model.
 */
import type { ChatClient, ChatCompletion, ChatRequest } from './client.ts';
import type { Message, ToolCall } from './types.ts';

/** A scripted reply: text, or a message with tool calls. */
export type ScriptedReply = string | { content?: string; tool_calls?: ToolCall[] };

/** Maps a request to the policy's reply. */
export type ScriptedPolicy = (messages: Message[], request: ChatRequest) => ScriptedReply | Promise<ScriptedReply>;

/** A ChatClient that answers from a script; it records every request it saw. */
export class ScriptedClient implements ChatClient {
  readonly requests: ChatRequest[] = [];
  private calls = 0;

  /** Takes a policy function, or a list of replies returned in order (the last one repeats). */
  constructor(private readonly policy: ScriptedPolicy | readonly ScriptedReply[]) {
    if (Array.isArray(policy) && policy.length === 0) throw new Error('ScriptedClient: the list of replies is empty');
  }

  readonly chat = {
    completions: {
      create: async (request: ChatRequest): Promise<ChatCompletion> => {
        const { signal: _signal, ...recorded } = request;
        this.requests.push(structuredClone(recorded));
        const index = this.calls++;
        const reply = typeof this.policy === 'function' ? await this.policy(request.messages, request) : this.policy[Math.min(index, this.policy.length - 1)]!;
        const message: Message =
          typeof reply === 'string' ? { role: 'assistant', content: reply } : { role: 'assistant', content: reply.content ?? '', ...(reply.tool_calls ? { tool_calls: reply.tool_calls } : {}) };
        return {
          id: `scripted-${index}`,
          model: request.model,
          choices: [{ index: 0, message, finish_reason: message.tool_calls ? 'tool_calls' : 'stop' }],
        };
      },
    },
  };
}
