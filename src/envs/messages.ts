/** Small helpers over chat transcripts that parsers, rubrics and environments share. */
import type { Message } from './types.ts';

/** The assistant messages of a transcript, in order. */
export function assistantMessages(messages: readonly Message[]): Message[] {
  return messages.filter((message) => message.role === 'assistant');
}

/** The text of the last assistant message, or '' when the model has not spoken. */
export function lastAssistantText(messages: readonly Message[]): string {
  return assistantMessages(messages).at(-1)?.content ?? '';
}

/** A completion as plain text: a string stays itself, a transcript gives its last assistant message. */
export function completionText(completion: string | readonly Message[]): string {
  return typeof completion === 'string' ? completion : lastAssistantText(completion);
}
