/**
 * Hugging Face tokenizers: `tokenizer.json` through `@huggingface/tokenizers` (pure JS, runs in a
 * page, a worker and Node), special tokens and the chat template from `tokenizer_config.json`
 * (or a separate `chat_template.jinja`), extra stop ids from `generation_config.json`. The files
 * come through a caller-supplied readFile, as for the model weights (model-folder.ts).
 */
import { Tokenizer as TokenizersJs } from '@huggingface/tokenizers';
import type { Message } from '../../chat/protocol.ts';
import { JinjaChatTemplate } from './chat-template.ts';
import type { ReadFile } from './model-folder.ts';
import type { ChatRenderOptions, DecodeOptions, EncodeOptions, Tokenizer } from './tokenizer.ts';
import { errorMessage } from '../../common/error-message.ts';

/** The parsed files of a Hugging Face tokenizer. */
export interface HfTokenizerFiles {
  /** tokenizer.json */
  tokenizerJson: unknown;
  /** tokenizer_config.json */
  tokenizerConfig: unknown;
  /** chat_template.jinja, when the template is kept out of tokenizer_config.json; it wins over the config's. */
  chatTemplate?: string;
  /** generation_config.json, whose eos_token_id adds stop ids (Qwen3 stops on <|im_end|> and <|endoftext|>). */
  generationConfig?: unknown;
}

/** A token as tokenizer_config.json writes it: a string, or an AddedToken object with `content`. */
type ConfigToken = string | { content?: string } | null | undefined;

/** A Hugging Face tokenizer with its chat template; see the file comment. */
export class HfTokenizer implements Tokenizer {
  readonly vocabSize: number;
  readonly eosIds: readonly number[];
  readonly padId: number;
  readonly bosId: number | null;
  /** The chat templates by name ("default", and e.g. "tool_use"); empty when the tokenizer has none. */
  readonly chatTemplates: ReadonlyMap<string, JinjaChatTemplate>;
  private readonly tokenizer: TokenizersJs;
  private readonly specialIds: Set<number>;
  private readonly specialPattern: RegExp | null;

  /** Builds the tokenizer from parsed files; label names the source in errors; `reuse` shares another instance's parsed vocabulary. */
  constructor(
    private readonly files: HfTokenizerFiles,
    private readonly label = 'tokenizer',
    reuse?: HfTokenizer,
  ) {
    if (typeof files.tokenizerJson !== 'object' || files.tokenizerJson === null) throw new Error(`${label}/tokenizer.json: expected a JSON object`);
    const config = (typeof files.tokenizerConfig === 'object' && files.tokenizerConfig !== null ? files.tokenizerConfig : {}) as Record<string, unknown>;
    try {
      this.tokenizer = reuse?.tokenizer ?? new TokenizersJs(files.tokenizerJson, config);
    } catch (error) {
      throw new Error(`${label}/tokenizer.json: cannot build the tokenizer (${errorMessage(error)})`);
    }
    const vocab = this.tokenizer.get_vocab(true);
    let maxId = -1;
    for (const id of vocab.values()) maxId = Math.max(maxId, id);
    this.vocabSize = maxId + 1;

    const added = this.tokenizer.get_added_tokens_decoder();
    this.specialIds = new Set([...added].filter(([, token]) => token.special).map(([id]) => id));
    const specialTexts = [...added.values()]
      .filter((token) => token.special)
      .map((token) => token.content)
      .sort((a, b) => b.length - a.length);
    this.specialPattern = specialTexts.length === 0 ? null : new RegExp(specialTexts.map(escapeRegExp).join('|'), 'g');

    const tokenText = (token: ConfigToken): string | null => (typeof token === 'string' ? token : (token?.content ?? null));
    const idOf = (field: string): number | null => {
      const text = tokenText(config[field] as ConfigToken);
      if (text === null) return null;
      const id = this.tokenizer.token_to_id(text);
      if (id === undefined) throw new Error(`${label}/tokenizer_config.json: ${field} ${JSON.stringify(text)} is not in the vocabulary`);
      return id;
    };
    const eos = new Set<number>(); // tokenizer_config's eos_token first: in chat models it is the end-of-turn token (<|im_end|>)
    const configEos = idOf('eos_token');
    if (configEos !== null) eos.add(configEos);
    const generationEos = (files.generationConfig as { eos_token_id?: unknown } | undefined)?.eos_token_id;
    for (const id of Array.isArray(generationEos) ? generationEos : [generationEos]) if (typeof id === 'number') eos.add(id);
    if (eos.size === 0) throw new Error(`${label}: no end-of-sequence token (eos_token in tokenizer_config.json or eos_token_id in generation_config.json)`);
    this.eosIds = [...eos];
    this.bosId = idOf('bos_token');
    this.padId = idOf('pad_token') ?? this.eosIds[0]!;

    const specialTokens: Record<string, string | null> = {};
    for (const field of ['bos_token', 'eos_token', 'unk_token', 'pad_token']) specialTokens[field] = tokenText(config[field] as ConfigToken);
    const templates = new Map<string, JinjaChatTemplate>();
    const rawTemplate = files.chatTemplate ?? config.chat_template;
    if (typeof rawTemplate === 'string') {
      templates.set('default', new JinjaChatTemplate(rawTemplate, specialTokens));
    } else if (Array.isArray(rawTemplate)) {
      for (const entry of rawTemplate as Array<{ name?: unknown; template?: unknown }>) {
        if (typeof entry.name === 'string' && typeof entry.template === 'string') templates.set(entry.name, new JinjaChatTemplate(entry.template, specialTokens));
      }
    }
    this.chatTemplates = templates;
  }

  /** Returns a tokenizer with the same vocabulary (shared, not re-parsed) and another chat template. */
  withChatTemplate(chatTemplate: string): HfTokenizer {
    return new HfTokenizer({ ...this.files, chatTemplate }, this.label, this);
  }

  encode(text: string, { allowSpecial = true }: EncodeOptions = {}): number[] {
    if (allowSpecial || this.specialPattern === null) return this.tokenizer.encode(text, { add_special_tokens: false }).ids;
    // Split every special token's text so the library cannot match it: "<|im_end|>" is encoded as "<" then "|im_end|>".
    const ids: number[] = [];
    let last = 0;
    for (const match of text.matchAll(this.specialPattern)) {
      ids.push(...this.encode(text.slice(last, match.index + 1)), ...this.encode(match[0].slice(1)));
      last = match.index + match[0].length;
    }
    ids.push(...this.encode(text.slice(last)));
    return ids;
  }

  decode(ids: readonly number[], { skipSpecialTokens = false }: DecodeOptions = {}): string {
    if (ids.length === 0) return '';
    return this.tokenizer.decode([...ids], { skip_special_tokens: skipSpecialTokens });
  }

  isSpecial(id: number): boolean {
    return this.specialIds.has(id);
  }

  /** Returns the id of a token's text, or undefined when it is not in the vocabulary. */
  tokenToId(token: string): number | undefined {
    return this.tokenizer.token_to_id(token);
  }

  renderChat(messages: readonly Message[], options: ChatRenderOptions = {}): string {
    const withTools = options.tools !== undefined && options.tools.length > 0;
    const template = (withTools ? this.chatTemplates.get('tool_use') : undefined) ?? this.chatTemplates.get('default');
    if (template === undefined) throw new Error('this tokenizer has no chat template (chat_template in tokenizer_config.json or chat_template.jinja)');
    return template.render(messages, options);
  }
}

/** Loads a Hugging Face tokenizer from a model folder: tokenizer.json, tokenizer_config.json, and chat_template.jinja and generation_config.json when present. */
export async function loadHfTokenizer(readFile: ReadFile, label = 'model folder'): Promise<HfTokenizer> {
  const readJson = async (name: string, required: boolean): Promise<unknown> => {
    let bytes: Uint8Array;
    try {
      bytes = await readFile(name);
    } catch (error) {
      if (!required) return undefined;
      throw new Error(`${label}: cannot read ${name} (${errorMessage(error)})`);
    }
    try {
      return JSON.parse(new TextDecoder().decode(bytes));
    } catch (error) {
      throw new Error(`${label}/${name}: not valid JSON (${errorMessage(error)})`);
    }
  };
  const tokenizerJson = await readJson('tokenizer.json', true);
  const tokenizerConfig = await readJson('tokenizer_config.json', true);
  const generationConfig = await readJson('generation_config.json', false);
  const chatTemplate = await readFile('chat_template.jinja').then(
    (bytes) => new TextDecoder().decode(bytes),
    () => undefined,
  );
  return new HfTokenizer({ tokenizerJson, tokenizerConfig, generationConfig, ...(chatTemplate !== undefined ? { chatTemplate } : {}) }, label);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
