/**
 * Chat templates: Hugging Face's Jinja chat templates rendered with `@huggingface/jinja` (the
 * variables transformers' `apply_chat_template` passes: messages, tools, add_generation_prompt
 * and the special tokens), and the rendering of a follow-up turn as a delta, for multi-turn
 * sampling that never re-tokenises history (DESIGN.md, data flow step 3).
 */
import { Template } from '@huggingface/jinja';
import type { Message } from '../../chat/protocol.ts';
import type { ChatRenderOptions } from './tokenizer.ts';
import { errorMessage } from '../../common/error-message.ts';

/** A compiled Jinja chat template and the special-token strings it may refer to (bos_token, eos_token, …). */
export class JinjaChatTemplate {
  private readonly template: Template;

  /** Compiles source; throws with the template's parse error. */
  constructor(
    readonly source: string,
    private readonly specialTokens: Record<string, string | null> = {},
  ) {
    try {
      this.template = new Template(source);
    } catch (error) {
      throw new Error(`chat template does not parse: ${errorMessage(error)}`);
    }
  }

  /** Renders a conversation as transformers' apply_chat_template(tokenize=False) would. */
  render(messages: readonly Message[], { addGenerationPrompt = false, tools, templateVariables = {} }: ChatRenderOptions = {}): string {
    return this.template.render({
      ...this.specialTokens,
      ...templateVariables,
      messages: messages.map((message) => ({ ...message })),
      add_generation_prompt: addGenerationPrompt,
      ...(tools !== undefined && tools.length > 0 ? { tools } : {}),
    });
  }
}

/** The rendering of new messages appended after an assistant turn; see renderChatDelta. */
export interface ChatDelta {
  /** Everything after the assistant's content: the template's closing of that turn, the new messages, the generation prompt. */
  text: string;
  /** The closing the template puts right after an assistant message's content (e.g. "<|im_end|>\n"). */
  closing: string;
}

const SENTINEL_USER = 'TABRL_DELTA_USER_7f3a';
const SENTINEL_ASSISTANT = 'TABRL_DELTA_ASSISTANT_7f3a';

/**
 * Renders newMessages as they would follow an assistant turn, ending in the generation prompt.
 * It renders a two-message stand-in history [user, assistant] with and without the new messages
 * and keeps what follows the assistant's content, so templates that rewrite older turns (Qwen3
 * drops the <think> of earlier replies) or inject a default system prompt give the same delta as
 * for the real history. Throws when the template renders the stand-in differently.
 */
export function renderChatDelta(
  renderChat: (messages: readonly Message[], options?: ChatRenderOptions) => string,
  newMessages: readonly Message[],
  options: Omit<ChatRenderOptions, 'addGenerationPrompt'> = {},
): ChatDelta {
  const history: Message[] = [
    { role: 'user', content: SENTINEL_USER },
    { role: 'assistant', content: SENTINEL_ASSISTANT },
  ];
  const before = renderChat(history, { ...options, addGenerationPrompt: false });
  const after = renderChat([...history, ...newMessages], { ...options, addGenerationPrompt: true });
  const end = (text: string, label: string): number => {
    const at = text.lastIndexOf(SENTINEL_ASSISTANT);
    if (at < 0) throw new Error(`chat template dropped the assistant message's content when rendering ${label}; cannot render a follow-up turn as a delta`);
    return at + SENTINEL_ASSISTANT.length;
  };
  const closing = before.slice(end(before, 'the history'));
  const text = after.slice(end(after, 'the follow-up'));
  if (!text.startsWith(closing)) {
    throw new Error(`chat template closes an assistant turn with ${JSON.stringify(closing)} but a follow-up renders ${JSON.stringify(text.slice(0, 40))}…`);
  }
  return { text, closing };
}
