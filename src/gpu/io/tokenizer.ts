/**
 * The tokenizer contract the inference engine and the trainer share: text ⇄ token ids, the
 * special tokens that end a turn or pad a batch, and the chat format that turns a conversation
 * into the text the model reads. Two implementations: the byte-level tokenizer of TabRL's tiny
 * models (byte-tokenizer.ts) and Hugging Face tokenizers with Jinja chat templates (hf-tokenizer.ts).
 */
import type { Message, ToolSchema } from '../../chat/protocol.ts';

/** Options of Tokenizer.renderChat. */
export interface ChatRenderOptions {
  /** Append the text that opens an assistant turn (Hugging Face's add_generation_prompt); default false. */
  addGenerationPrompt?: boolean;
  /** Tools offered to the model, rendered into the prompt when the chat format supports them. */
  tools?: ToolSchema[];
  /** Extra template variables (e.g. `{ enable_thinking: false }` for Qwen3). */
  templateVariables?: Record<string, unknown>;
}

/** Options of Tokenizer.encode. */
export interface EncodeOptions {
  /** Parse special-token strings in the text (e.g. "<|im_end|>") as their ids; default true, as chat rendering needs. */
  allowSpecial?: boolean;
}

/** Options of Tokenizer.decode. */
export interface DecodeOptions {
  /** Leave special tokens (end of turn, role markers, padding) out of the text; default false. */
  skipSpecialTokens?: boolean;
}

/** Text ⇄ token ids, special tokens and the chat format of one model. */
export interface Tokenizer {
  /** Number of token ids the tokenizer knows (ids lie in [0, vocabSize)); a model's vocab_size may be larger. */
  readonly vocabSize: number;
  /** Ids that end an assistant turn or a document (the default stop tokens of generation); the first is the chat format's end-of-turn token. */
  readonly eosIds: readonly number[];
  /** Id used to pad right-padded batches. */
  readonly padId: number;
  /** Id that opens a sequence, or null when the format has none. */
  readonly bosId: number | null;
  /** Returns the token ids of text (no BOS or other post-processing added). */
  encode(text: string, options?: EncodeOptions): number[];
  /** Returns the text of ids; never throws on a partial multi-byte character (it decodes as U+FFFD). */
  decode(ids: readonly number[], options?: DecodeOptions): string;
  /** True when id is a special (control) token. */
  isSpecial(id: number): boolean;
  /** Returns the text the model reads for a conversation, in the model's chat format. */
  renderChat(messages: readonly Message[], options?: ChatRenderOptions): string;
}
