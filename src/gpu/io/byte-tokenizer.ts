/**
 * The byte-level tokenizer of TabRL's tiny from-scratch models: ids 0–255 are the bytes of the
 * UTF-8 text, followed by eight special tokens, so any text round-trips losslessly and the
 * vocabulary (264) stays small enough for a model trained in a tab. Its chat format is fixed:
 *
 *   <|bos|><|system|>You are terse.<|end|><|user|>hi<|end|><|assistant|>hello<|end|>
 *
 * one role marker, the content and <|end|> per message, with `<|assistant|>` as the generation
 * prompt. Tools are listed in the system block as one JSON line each, and the model calls them in
 * text as `<tool_call>{"name": …, "arguments": {…}}</tool_call>`, the form ToolEnv parses.
 */
import type { Message, ToolSchema } from '../../chat/protocol.ts';
import type { ChatRenderOptions, DecodeOptions, EncodeOptions, Tokenizer } from './tokenizer.ts';

/** The special tokens in id order, starting at 256. */
export const BYTE_SPECIAL_TOKENS = ['<|pad|>', '<|bos|>', '<|eos|>', '<|system|>', '<|user|>', '<|assistant|>', '<|tool|>', '<|end|>'] as const;

/** One of BYTE_SPECIAL_TOKENS. */
export type ByteSpecialToken = (typeof BYTE_SPECIAL_TOKENS)[number];

/** The byte tokenizer's vocabulary size: 256 bytes and the special tokens. */
export const BYTE_VOCAB_SIZE = 256 + BYTE_SPECIAL_TOKENS.length;

const ROLE_TOKENS: Record<Message['role'], ByteSpecialToken> = {
  system: '<|system|>',
  user: '<|user|>',
  assistant: '<|assistant|>',
  tool: '<|tool|>',
};

/** Matches the text of any special token (none is a prefix of another). */
const SPECIAL_PATTERN = new RegExp(BYTE_SPECIAL_TOKENS.map((token) => token.replace(/[|]/g, '\\|')).join('|'), 'g');

/** UTF-8 bytes ⇄ ids, eight special tokens and a small fixed chat format; see the file comment. */
export class ByteTokenizer implements Tokenizer {
  readonly vocabSize = BYTE_VOCAB_SIZE;
  readonly eosIds: readonly number[];
  readonly padId: number;
  readonly bosId: number;
  private readonly encoder = new TextEncoder();

  constructor() {
    this.eosIds = [this.specialId('<|end|>'), this.specialId('<|eos|>')];
    this.padId = this.specialId('<|pad|>');
    this.bosId = this.specialId('<|bos|>');
  }

  /** Returns the id of a special token. */
  specialId(token: ByteSpecialToken): number {
    return 256 + BYTE_SPECIAL_TOKENS.indexOf(token);
  }

  encode(text: string, { allowSpecial = true }: EncodeOptions = {}): number[] {
    const ids: number[] = [];
    const pushBytes = (part: string): void => {
      for (const byte of this.encoder.encode(part)) ids.push(byte);
    };
    if (!allowSpecial) {
      pushBytes(text);
      return ids;
    }
    let last = 0;
    for (const match of text.matchAll(SPECIAL_PATTERN)) {
      pushBytes(text.slice(last, match.index));
      ids.push(this.specialId(match[0] as ByteSpecialToken));
      last = match.index + match[0].length;
    }
    pushBytes(text.slice(last));
    return ids;
  }

  decode(ids: readonly number[], { skipSpecialTokens = false }: DecodeOptions = {}): string {
    // A fresh non-fatal decoder per call: a partial multi-byte sequence becomes U+FFFD, never an exception.
    const decoder = new TextDecoder('utf-8', { fatal: false });
    let text = '';
    let bytes: number[] = [];
    const flush = (): void => {
      if (bytes.length > 0) text += decoder.decode(new Uint8Array(bytes));
      bytes = [];
    };
    for (const id of ids) {
      if (id >= 0 && id < 256) {
        bytes.push(id);
      } else {
        flush();
        const special = BYTE_SPECIAL_TOKENS[id - 256];
        if (special === undefined) throw new Error(`token id ${id} is outside the byte vocabulary [0, ${BYTE_VOCAB_SIZE})`);
        if (!skipSpecialTokens) text += special;
      }
    }
    flush();
    return text;
  }

  isSpecial(id: number): boolean {
    return id >= 256 && id < BYTE_VOCAB_SIZE;
  }

  renderChat(messages: readonly Message[], { addGenerationPrompt = false, tools }: ChatRenderOptions = {}): string {
    let text = '<|bos|>';
    let rest = messages;
    if (tools !== undefined && tools.length > 0) {
      const system = messages[0]?.role === 'system' ? messages[0].content : '';
      text += `<|system|>${system === '' ? '' : `${system}\n\n`}${renderTools(tools)}<|end|>`;
      if (messages[0]?.role === 'system') rest = messages.slice(1);
    }
    for (const message of rest) {
      let content = message.content;
      for (const call of message.tool_calls ?? []) {
        content += `<tool_call>{"name": ${JSON.stringify(call.function.name)}, "arguments": ${call.function.arguments}}</tool_call>`;
      }
      text += `${ROLE_TOKENS[message.role]}${content}<|end|>`;
    }
    if (addGenerationPrompt) text += '<|assistant|>';
    return text;
  }
}

/** The tool block of the system message: one JSON line per tool, then how to call one. */
function renderTools(tools: readonly ToolSchema[]): string {
  const lines = tools.map((tool) => JSON.stringify({ name: tool.function.name, description: tool.function.description, parameters: tool.function.parameters }));
  return `Tools:\n${lines.join('\n')}\nCall a tool with <tool_call>{"name": "…", "arguments": {…}}</tool_call>.`;
}
