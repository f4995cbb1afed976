/**
 * LocalChatClient: the `ChatClient` of src/envs over a model running in this process (the CPU
 * backend, or any ModelBackend with a Decoder for it), so every environment runs unchanged against
 * the in-tab engine and hands the trainer the exact tokens that were sampled.
 *
 * Token-in/token-out multi-turn: after each completion the client remembers the conversation
 * (the request's messages plus the returned assistant message) with the token sequence the model
 * actually produced. A follow-up request whose messages extend a remembered conversation (same
 * prefix, the assistant reply exactly as returned) appends only the new messages, rendered as a
 * delta by the chat template (renderChatDelta), to that sequence; history is never re-tokenised,
 * and the turn's `promptIds` are just the delta. When the model ended its reply with the template's
 * end-of-turn token, the delta starts after it; when it stopped on length or a stop string, the
 * template's closing is part of the delta (environment tokens, masked out in training). The KV
 * cache of a finished turn is kept, within a memory budget, so the follow-up prefills only the delta.
 *
 * Weights: the decoder is a snapshot of the backend's parameters; `syncWeights()` takes a new one
 * after a training step and bumps `policyVersion`, which every choice reports.
 */
import { ChatClientError, type ChatChoice, type ChatClient, type ChatCompletion, type ChatRequest } from '../../chat/protocol.ts';
import type { Message, TurnTokens } from '../../chat/protocol.ts';
import { renderChatDelta } from '../io/chat-template.ts';
import type { Tokenizer } from '../io/tokenizer.ts';
import type { ModelBackend } from '../model/backend.ts';
import { createCpuDecoder } from './cpu-decoder.ts';
import type { Decoder, SequenceId } from './decoder.ts';
import { Generator, type GenerationRequest, type GeneratorOptions } from './generate.ts';
import { errorMessage } from '../../common/error-message.ts';

/** Turn tokens as the local client returns them: TurnTokens plus the policy version they were sampled with. */
export interface LocalTurnTokens extends TurnTokens {
  policyVersion: number;
}

/** A choice of a local completion: always carries its tokens and the policy version. */
export interface LocalChatChoice extends ChatChoice {
  tokens: LocalTurnTokens;
  policy_version: number;
}

/** A completion of the local client. */
export interface LocalChatCompletion extends ChatCompletion {
  choices: LocalChatChoice[];
  policy_version: number;
}

/** Options of a LocalChatClient. */
export interface LocalChatClientOptions {
  backend: ModelBackend;
  tokenizer: Tokenizer;
  /** Builds a decoder over the backend's current weights (default: the CPU decoder). */
  createDecoder?: (backend: ModelBackend) => Promise<Decoder>;
  /** Model name reported in completions (default "local"). */
  model?: string;
  /** max_tokens when a request gives none (default 256). */
  defaultMaxTokens?: number;
  /** Extra chat-template variables, e.g. `{ enable_thinking: false }` for Qwen3. */
  templateVariables?: Record<string, unknown>;
  /** Batching options of the generation engine. */
  generator?: GeneratorOptions;
  /** Finished conversations remembered for follow-ups (default 4096; the oldest are forgotten first). */
  maxConversations?: number;
  /** Bytes of KV cache kept for follow-up turns (default 256 MiB; 0 re-prefills every follow-up from its tokens). */
  cacheBudgetBytes?: number;
}

/** A remembered conversation: the tokens of everything the model has seen and sampled, and maybe its cache. */
interface Conversation {
  ids: number[];
  /** The last sampled token, when it was a stop token (the template's end of turn, usually). */
  stopTokenId: number | null;
  /** The sequence holding ids (all but the last token) in the current decoder's cache, when kept. */
  seq: SequenceId | null;
}

/** The in-process policy as a ChatClient; see the file comment. */
export class LocalChatClient implements ChatClient {
  readonly chat: { completions: { create: (request: ChatRequest) => Promise<LocalChatCompletion> } };
  readonly backend: ModelBackend;
  readonly tokenizer: Tokenizer;
  private readonly options: LocalChatClientOptions;
  private readonly createDecoder: (backend: ModelBackend) => Promise<Decoder>;
  private generator: Promise<Generator> | null = null;
  private syncing: Promise<void> | null = null;
  private version = 0;
  private completions = 0;
  private readonly conversations = new Map<string, Conversation>(); // insertion order = age
  private readonly cacheBudgetTokens: number;

  constructor(options: LocalChatClientOptions) {
    this.options = options;
    this.backend = options.backend;
    this.tokenizer = options.tokenizer;
    this.createDecoder = options.createDecoder ?? createCpuDecoder;
    const { num_hidden_layers: L, num_key_value_heads: KVH, head_dim: HS } = options.backend.config;
    const bytesPerToken = L * 2 * KVH * HS * 4; // keys and values, f32
    this.cacheBudgetTokens = Math.floor((options.cacheBudgetBytes ?? 256 * 2 ** 20) / bytesPerToken);
    this.chat = { completions: { create: (request) => this.create(request) } };
  }

  /** The number of weight syncs so far: the policy version the next samples will carry. */
  get policyVersion(): number {
    return this.version;
  }

  /**
   * Takes a new snapshot of the backend's weights (call after each training step): waits for the
   * requests in flight to finish with the old weights, holds new ones until the new decoder is
   * ready, drops the old KV caches (the remembered token sequences stay), and returns the new version.
   */
  async syncWeights(): Promise<number> {
    while (this.syncing !== null) await this.syncing;
    const sync = (async () => {
      if (this.generator !== null) {
        const generator = await this.generator;
        await generator.idle();
        for (const conversation of this.conversations.values()) conversation.seq = null;
        generator.decoder.dispose();
        generator.setDecoder(await this.createDecoder(this.backend));
      }
      this.version++;
    })();
    this.syncing = sync;
    try {
      await sync;
    } finally {
      this.syncing = null;
    }
    return this.version;
  }

  /** Forgets every remembered conversation and frees the kept caches. */
  async forget(): Promise<void> {
    const decoder = this.generator === null ? null : (await this.generator).decoder;
    for (const conversation of this.conversations.values()) if (conversation.seq !== null) decoder?.release(conversation.seq);
    this.conversations.clear();
  }

  /** Answers one chat-completions request; see the file comment. */
  private async create(request: ChatRequest): Promise<LocalChatCompletion> {
    if (request.signal?.aborted) throw new ChatClientError('the request was aborted', 'aborted');
    if (!Array.isArray(request.messages) || request.messages.length === 0) throw new ChatClientError('messages must be a non-empty array', 'bad_request');
    const generator = await this.getGenerator();
    // From the end of this wait to generator.generate() nothing awaits, so a weight sync can never
    // fall between choosing the prompt and cache and queueing the request.
    while (this.syncing !== null) await this.syncing;
    const version = this.version;

    // The prompt: a delta after a remembered conversation, or the whole rendered chat.
    const rendering = { tools: request.tools, templateVariables: this.options.templateVariables };
    let promptIds: number[];
    let context: number[];
    let parent: SequenceId | undefined;
    const found = this.findConversation(request.messages);
    try {
      if (found !== null) {
        const { conversation, newMessages } = found;
        let text = renderChatDelta((messages, options) => this.tokenizer.renderChat(messages, options), newMessages, rendering).text;
        if (conversation.stopTokenId !== null) {
          const stopText = this.tokenizer.decode([conversation.stopTokenId]);
          if (stopText !== '' && text.startsWith(stopText)) text = text.slice(stopText.length);
        }
        promptIds = this.tokenizer.encode(text);
        context = [...conversation.ids, ...promptIds];
        if (conversation.seq !== null) {
          parent = conversation.seq; // handed over to this request; a second follow-up of the same turn re-prefills
          conversation.seq = null;
        }
      } else {
        promptIds = this.tokenizer.encode(this.tokenizer.renderChat(request.messages, { ...rendering, addGenerationPrompt: true }));
        context = promptIds;
      }
    } catch (error) {
      throw new ChatClientError(`cannot render the chat: ${errorMessage(error)}`, 'bad_request');
    }
    const fed = parent === undefined ? 0 : generator.decoder.sequenceLength(parent);

    const stop = request.stop === undefined ? [] : typeof request.stop === 'string' ? [request.stop] : request.stop;
    const generation: GenerationRequest = {
      prompt: context.slice(fed),
      ...(parent !== undefined ? { parent } : {}),
      n: request.n ?? 1,
      temperature: request.temperature ?? 1,
      topP: request.top_p ?? 1,
      topK: request.top_k ?? 0,
      maxTokens: request.max_tokens ?? this.options.defaultMaxTokens ?? 256,
      stopStrings: stop,
      ...(request.seed !== undefined ? { seed: request.seed } : {}),
      keepSequences: this.cacheBudgetTokens > 0,
      ...(request.signal !== undefined ? { signal: request.signal } : {}),
    };
    let result;
    try {
      result = await generator.generate(generation);
    } catch (error) {
      if (parent !== undefined) releaseQuietly(generator.decoder, parent);
      if (request.signal?.aborted) throw new ChatClientError('the request was aborted', 'aborted');
      const message = errorMessage(error);
      throw new ChatClientError(`local model: ${message}`, /must|outside|at least/.test(message) ? 'bad_request' : 'server');
    }

    const choices: LocalChatChoice[] = result.samples.map((sample) => {
      const message: Message = { role: 'assistant', content: sample.text };
      const stopTokenId = sample.stop !== undefined && 'tokenId' in sample.stop ? sample.stop.tokenId : null;
      this.remember([...request.messages, message], { ids: [...context, ...sample.tokenIds], stopTokenId, seq: sample.sequence ?? null }, generator.decoder);
      const choice: LocalChatChoice = {
        index: sample.index,
        message,
        finish_reason: sample.finishReason,
        tokens: {
          promptIds: [...promptIds],
          completionIds: [...sample.tokenIds],
          completionLogprobs: [...sample.logprobs],
          ...(sample.entropies && sample.entropies.length === sample.tokenIds.length ? { completionEntropies: [...sample.entropies] } : {}),
          policyVersion: version,
        },
        policy_version: version,
      };
      if (request.logprobs) {
        choice.logprobs = { content: sample.tokenIds.map((id, i) => ({ token: this.tokenizer.decode([id]), logprob: sample.logprobs[i]! })) };
      }
      return choice;
    });
    const completionTokens = choices.reduce((sum, choice) => sum + choice.tokens.completionIds.length, 0);
    return {
      id: `local-${++this.completions}`,
      model: this.options.model ?? 'local',
      choices,
      usage: { prompt_tokens: context.length, completion_tokens: completionTokens, total_tokens: context.length + completionTokens },
      policy_version: version,
    };
  }

  /** Returns the generator, building the first decoder on first use. */
  private getGenerator(): Promise<Generator> {
    this.generator ??= this.createDecoder(this.backend).then((decoder) => new Generator(decoder, this.tokenizer, this.options.generator));
    return this.generator;
  }

  /** Returns the longest remembered conversation that messages extend (ending on an assistant turn), and the messages after it. */
  private findConversation(messages: readonly Message[]): { conversation: Conversation; newMessages: Message[] } | null {
    for (let end = messages.length - 1; end >= 1; end--) {
      if (messages[end - 1]!.role !== 'assistant') continue;
      const conversation = this.conversations.get(conversationKey(messages.slice(0, end)));
      if (conversation !== undefined) return { conversation, newMessages: messages.slice(end) };
    }
    return null;
  }

  /** Remembers a finished turn, forgetting the oldest turns and caches beyond the limits. */
  private remember(messages: readonly Message[], conversation: Conversation, decoder: Decoder): void {
    const key = conversationKey(messages);
    const previous = this.conversations.get(key);
    if (previous?.seq != null) decoder.release(previous.seq);
    this.conversations.delete(key);
    this.conversations.set(key, conversation);
    const maxConversations = this.options.maxConversations ?? 4096;
    for (const [oldKey, old] of this.conversations) {
      if (this.conversations.size <= maxConversations) break;
      if (old.seq !== null) decoder.release(old.seq);
      this.conversations.delete(oldKey);
    }
    let cached = 0;
    for (const c of this.conversations.values()) if (c.seq !== null) cached += c.ids.length;
    for (const old of this.conversations.values()) {
      if (cached <= this.cacheBudgetTokens) break;
      if (old.seq === null) continue;
      decoder.release(old.seq);
      cached -= old.ids.length;
      old.seq = null;
    }
  }
}

/** Identifies a conversation by the fields of its messages that a chat template renders. */
function conversationKey(messages: readonly Message[]): string {
  return JSON.stringify(messages.map((m) => [m.role, m.content, m.tool_calls ?? null, m.tool_call_id ?? null, m.name ?? null]));
}

/** Frees a sequence that may already have been freed. */
function releaseQuietly(decoder: Decoder, seq: SequenceId): void {
  try {
    decoder.release(seq);
  } catch {
    // already released
  }
}
