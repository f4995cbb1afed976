/**
 * The JSON text of an observation reply, `{"type":"observation","data":StepResult}`, written field by
 * field instead of by a generic `JSON.stringify` of the whole object: the one reply every served turn
 * sends. An observation repeats the whole conversation at every step, and a session's episodes open
 * on the same system prompt, so each session keeps the text of the messages it wrote last, by
 * position, and writes a message again only when it differs from the one at its position (a
 * message's text is reused only for a plain `{role, content}`; any other message goes through
 * `JSON.stringify`). The text is exactly `JSON.stringify`'s for the same reply, key for key.
 *
 * It builds no observation and sends nothing (observation.ts and server.ts do).
 */
import type { Message } from '../../envs/index.ts';
import type { Observation, StepResult } from './wire.ts';

/** One session's writer of observation replies, with the text of the messages it wrote last. */
export class ObservationReplyWriter {
  /** The messages of the last observation written, by position: role, content and their JSON text. */
  private readonly written: ({ role: string; content: string; text: string } | undefined)[] = [];

  /** The JSON text of `{"type":"observation","data": result}`, equal to `JSON.stringify`'s. */
  write(result: StepResult): string {
    const observation = result.observation;
    return (
      `{"type":"observation","data":{"observation":${this.observationText(observation)}` +
      `,"reward":${result.reward === null ? 'null' : numberText(result.reward)},"done":${result.done},"terminated":${result.terminated},"truncated":${result.truncated}}}`
    );
  }

  private observationText(observation: Observation): string {
    let text = `{"prompt":${JSON.stringify(observation.prompt)},"messages":${this.messagesText(observation.messages)}`;
    if (observation.tools !== undefined) text += `,"tools":${JSON.stringify(observation.tools)}`;
    text += `,"task_index":${numberText(observation.task_index)},"split":${JSON.stringify(observation.split)}`;
    if (observation.info !== undefined) text += `,"info":${JSON.stringify(observation.info)}`;
    text += `,"turn":${numberText(observation.turn)}`;
    if (observation.scores !== undefined) text += `,"scores":${JSON.stringify(observation.scores)}`;
    if (observation.metrics !== undefined) text += `,"metrics":${JSON.stringify(observation.metrics)}`;
    if (observation.stop_reason !== undefined) text += `,"stop_reason":${JSON.stringify(observation.stop_reason)}`;
    if (observation.error !== undefined) text += `,"error":${JSON.stringify(observation.error)}`;
    return `${text}}`;
  }

  private messagesText(messages: readonly Message[]): string {
    let text = '[';
    for (let i = 0; i < messages.length; i++) {
      if (i > 0) text += ',';
      text += this.messageText(messages[i]!, i);
    }
    this.written.length = messages.length;
    return `${text}]`;
  }

  /** The text of the message at `position`, reused when the message written last at that position is the same plain message. */
  private messageText(message: Message, position: number): string {
    if (!isRoleAndContent(message)) {
      this.written[position] = undefined;
      return JSON.stringify(message) ?? 'null';
    }
    const last = this.written[position];
    if (last !== undefined && last.content === message.content && last.role === message.role) return last.text;
    const text = `{"role":${JSON.stringify(message.role)},"content":${JSON.stringify(message.content)}}`;
    this.written[position] = { role: message.role, content: message.content, text };
    return text;
  }
}

/** Whether a message is a plain object with exactly `role` then `content`, both strings (so its JSON text is fixed by the two). */
function isRoleAndContent(message: Message): boolean {
  if (typeof message !== 'object' || message === null || Object.getPrototypeOf(message) !== Object.prototype) return false;
  if (typeof message.role !== 'string' || typeof message.content !== 'string') return false;
  let keys = 0;
  for (const key in message) {
    if ((keys === 0 && key !== 'role') || (keys === 1 && key !== 'content') || keys > 1) return false;
    keys += 1;
  }
  return keys === 2;
}

/** A number as JSON writes it (null for NaN and the infinities). */
function numberText(value: number): string {
  return Number.isFinite(value) ? String(value) : 'null';
}
