/**
 * Turns a chat transcript into the token sequence the in-tab model would have produced for it,
 * for SFT: the opening prompt rendered by the chat format up to the generation prompt, then for
 * each assistant message its content's tokens followed by the end-of-turn token (both trained),
 * then the environment's next messages rendered as a delta (not trained), and so on. This is the
 * same layout LocalChatClient builds while sampling, so SFT teaches exactly what GRPO later samples.
 */
import type { Message, ToolSchema } from '../envs/index.ts';
import { renderChatDelta } from '../gpu/io/chat-template.ts';
import type { Tokenizer } from '../gpu/io/tokenizer.ts';
import type { TrainSequence } from './token-batch.ts';

/** Tokenises a transcript; assistant tokens (and their end-of-turn token) are marked as trained. */
export function tokenizeTranscript(tokenizer: Tokenizer, messages: readonly Message[], tools?: ToolSchema[]): TrainSequence {
  const firstAssistant = messages.findIndex((message) => message.role === 'assistant');
  if (firstAssistant < 0) throw new Error('tokenizeTranscript: the transcript has no assistant message to train on');
  const endOfTurn = tokenizer.eosIds[0];
  if (endOfTurn === undefined) throw new Error('tokenizeTranscript: the tokenizer has no end-of-turn token');
  const endOfTurnText = tokenizer.decode([endOfTurn]);
  const options = tools && tools.length > 0 ? { tools } : {};
  const sequence: TrainSequence = { tokens: [], sampled: [], samplingLogprobs: [], advantage: 1 };
  const push = (ids: readonly number[], trained: boolean) => {
    for (const id of ids) {
      sequence.tokens.push(id);
      sequence.sampled.push(trained ? 1 : 0);
      sequence.samplingLogprobs.push(0);
    }
  };

  push(tokenizer.encode(tokenizer.renderChat(messages.slice(0, firstAssistant), { ...options, addGenerationPrompt: true })), false);
  let i = firstAssistant;
  while (i < messages.length) {
    const assistant = messages[i]!;
    push([...tokenizer.encode(assistantText(assistant), { allowSpecial: false }), endOfTurn], true);
    const next = messages.findIndex((message, j) => j > i && message.role === 'assistant');
    if (next < 0) break;
    // The environment's messages between two assistant turns, as the chat format continues after the end-of-turn token.
    const delta = renderChatDelta((m, o) => tokenizer.renderChat(m, o), messages.slice(i + 1, next), options);
    const text = delta.text.startsWith(endOfTurnText) ? delta.text.slice(endOfTurnText.length) : delta.text;
    push(tokenizer.encode(text), false);
    i = next;
  }
  return sequence;
}

/** An assistant message as the model writes it: its text, then its tool calls in the `<tool_call>` form. */
function assistantText(message: Message): string {
  const calls = (message.tool_calls ?? []).map((call) => `<tool_call>{"name": ${JSON.stringify(call.function.name)}, "arguments": ${call.function.arguments}}</tool_call>`);
  return message.content + calls.join('');
}
