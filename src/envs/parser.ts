/**
 * Parsers turn a model's text into the fields a reward needs, and score whether the model kept to
 * the format. `XMLParser` reads `<field>...</field>` tags; `ThinkParser` splits off a `<think>` block.
 * A parser never throws on model output: unparseable text gives `undefined` fields.
 */
import { assistantMessages, completionText } from './messages.ts';
import type { RewardContext, RewardFunction } from './rubric.ts';
import type { Message } from './types.ts';

/** The plain parser: the answer is the whole last assistant message, trimmed. */
export class Parser {
  /** Parses one message's text; the base parser returns it trimmed. */
  parse(text: string): unknown {
    return text.trim();
  }

  /** The answer in a completion (its last assistant message), or undefined when there is none. */
  parseAnswer(completion: string | readonly Message[]): string | undefined {
    const text = completionText(completion).trim();
    return text === '' ? undefined : text;
  }

  /** Instructions for the system prompt that describe the expected format. */
  formatInstructions(): string {
    return '';
  }

  /** A reply in this parser's format whose answer is `answer` (how `tabrl validate` plays a dataset's reference answers); the base parser's is the answer itself. */
  formatAnswer(answer: string): string {
    return answer;
  }

  /** A reward function scoring format adherence in [0, 1]; the base parser accepts any non-empty reply. */
  formatReward(): RewardFunction {
    const formatReward = (ctx: RewardContext): number => (this.parseAnswer(ctx.completion) === undefined ? 0 : 1);
    return formatReward;
  }
}

/** A field of an XMLParser: one tag name, or a tag with accepted alternatives (`['answer', 'result']`). */
export type XMLField = string | readonly string[];

/** Options of an XMLParser. */
export interface XMLParserOptions {
  /** Which field `parseAnswer` returns (default: the last field). */
  answerField?: string;
}

/** The fields parsed out of one message; a field that is absent is undefined. */
export type ParsedFields = Record<string, string | undefined>;

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Reads `<field>...</field>` tags from model output, as verifiers' XMLParser does. */
export class XMLParser extends Parser {
  /** Canonical name of each field, with the tag names that count as it. */
  readonly fields: { name: string; tags: readonly string[] }[];
  readonly answerField: string;

  constructor(fields: readonly XMLField[], options: XMLParserOptions = {}) {
    super();
    if (fields.length === 0) throw new Error('XMLParser needs at least one field');
    this.fields = fields.map((field) => {
      const tags = typeof field === 'string' ? [field] : [...field];
      if (tags.length === 0) throw new Error('XMLParser: a field needs at least one tag name');
      return { name: tags[0]!, tags };
    });
    this.answerField = options.answerField ?? this.fields.at(-1)!.name;
    if (!this.fields.some((field) => field.name === this.answerField)) {
      throw new Error(`XMLParser: answerField "${this.answerField}" is not one of the fields`);
    }
  }

  /** Every field's content (the last occurrence of its tag), trimmed; absent fields are undefined. */
  override parse(text: string): ParsedFields {
    const parsed: ParsedFields = {};
    for (const { name, tags } of this.fields) {
      parsed[name] = undefined;
      for (const tag of tags) {
        const pattern = new RegExp(`<${escapeRegExp(tag)}>([\\s\\S]*?)</${escapeRegExp(tag)}>`, 'g');
        const matches = [...text.matchAll(pattern)];
        if (matches.length > 0) {
          parsed[name] = matches.at(-1)![1]!.trim();
          break;
        }
      }
    }
    return parsed;
  }

  /** The answer field of the last assistant message that has one. */
  override parseAnswer(completion: string | readonly Message[]): string | undefined {
    const texts = typeof completion === 'string' ? [completion] : assistantMessages(completion).map((m) => m.content);
    for (const text of texts.reverse()) {
      const value = this.parse(text)[this.answerField];
      if (value !== undefined) return value;
    }
    return undefined;
  }

  /** Every field's tags in order: the answer field holds `answer`, the others a short placeholder. */
  override formatAnswer(answer: string): string {
    return this.fields.map(({ name, tags }) => `<${tags[0]}>\n${name === this.answerField ? answer : 'reference answer'}\n</${tags[0]}>`).join('\n');
  }

  /** Tells the model which tags to write, in order. */
  override formatInstructions(): string {
    const lines = this.fields.map(({ tags }) => `<${tags[0]}>\n...\n</${tags[0]}>`);
    return `Respond in the following format:\n${lines.join('\n')}`;
  }

  /**
   * Format adherence in [0, 1], averaged over assistant messages: the share of fields present,
   * with a small penalty for text outside the tags.
   */
  override formatReward(): RewardFunction {
    const formatReward = (ctx: RewardContext): number => {
      const texts = typeof ctx.completion === 'string' ? [ctx.completion] : assistantMessages(ctx.completion).map((m) => m.content);
      if (texts.length === 0) return 0;
      const perMessage = texts.map((text) => {
        const parsed = this.parse(text);
        const present = this.fields.filter((field) => parsed[field.name] !== undefined).length;
        const outside = this.fields.reduce((rest, { tags }) => tags.reduce((r, tag) => r.replace(new RegExp(`<${escapeRegExp(tag)}>[\\s\\S]*?</${escapeRegExp(tag)}>`, 'g'), ''), rest), text);
        const tidy = outside.trim() === '' ? 1 : 0.8;
        return (present / this.fields.length) * tidy;
      });
      return perMessage.reduce((a, b) => a + b, 0) / perMessage.length;
    };
    return formatReward;
  }
}

/** The parts of a reply with a reasoning block: `<think>reasoning</think> answer`. */
export interface ThinkParsed {
  think: string | undefined;
  answer: string;
}

/**
 * Splits a `<think>...</think>` block from the answer that follows it. The answer can be parsed
 * further by an inner parser (e.g. an XMLParser for `<answer>` tags).
 */
export class ThinkParser extends Parser {
  constructor(readonly inner: Parser = new Parser()) {
    super();
  }

  /** The reasoning block and the text after it; with no closing tag, the whole text is the answer. */
  override parse(text: string): ThinkParsed {
    const close = text.lastIndexOf('</think>');
    if (close === -1) return { think: undefined, answer: text.trim() };
    const open = text.indexOf('<think>');
    const think = text.slice(open === -1 ? 0 : open + '<think>'.length, close).trim();
    return { think, answer: text.slice(close + '</think>'.length).trim() };
  }

  /** The answer after the reasoning block of the last assistant message, through the inner parser. */
  override parseAnswer(completion: string | readonly Message[]): string | undefined {
    const { think, answer } = this.parse(completionText(completion));
    if (think === undefined) return undefined;
    return this.inner.parseAnswer(answer);
  }

  /** A short reasoning block, then the inner parser's reply. */
  override formatAnswer(answer: string): string {
    return `<think>reference answer</think>\n${this.inner.formatAnswer(answer)}`;
  }

  /** Asks for reasoning in `<think>` tags first, then the inner parser's format. */
  override formatInstructions(): string {
    const inner = this.inner.formatInstructions();
    return `Think step by step inside <think>...</think> tags, then give your answer.${inner ? `\n${inner}` : ''}`;
  }

  /** 1 when every assistant message opens with one complete `<think>` block followed by an answer, else 0. */
  override formatReward(): RewardFunction {
    const formatReward = (ctx: RewardContext): number => {
      const texts = typeof ctx.completion === 'string' ? [ctx.completion] : assistantMessages(ctx.completion).map((m) => m.content);
      if (texts.length === 0) return 0;
      const wellFormed = texts.filter((text) => {
        const trimmed = text.trim();
        const opens = trimmed.split('<think>').length - 1;
        const closes = trimmed.split('</think>').length - 1;
        return trimmed.startsWith('<think>') && opens === 1 && closes === 1 && this.parse(trimmed).answer !== '';
      });
      return wellFormed.length / texts.length;
    };
    return formatReward;
  }
}
