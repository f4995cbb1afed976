/**
 * Rewards without a verifier: a judge model reads the question, the reference answer (if any) and
 * the response, and its reply becomes a score. The judge is any ChatClient, so an API model, a
 * WebLLM model or the in-tab model can judge. A judge that cannot be reached or refuses the request
 * is a fatal error of the run (see studio/judge-call.ts); a reply without a score is a recorded error.
 */
import type { ChatClient } from './client.ts';
import { completionText } from './messages.ts';
import { Rubric, type RewardContext } from './rubric.ts';
import { toJudgeError } from './studio/judge-call.ts';
import type { State } from './types.ts';

/** The default judge prompt: a 0–10 grade. Placeholders: {question}, {answer}, {response}. */
export const DEFAULT_JUDGE_PROMPT = `You are grading a response.

Question:
{question}

Reference answer (may be empty):
{answer}

Response:
{response}

Grade the response from 0 (useless) to 10 (excellent). Reply with the grade alone, like "Score: 7".`;

/** Options of a judge rubric. */
export interface JudgeRubricOptions {
  judgeClient: ChatClient;
  /** Model name sent to the judge client (default "default"). */
  judgeModel?: string;
  /** Prompt template with {question}, {answer} and {response} placeholders. */
  judgePrompt?: string;
  /** Turns the judge's reply into a score; throwing records an error and scores 0. Default: `parseJudgeScore`. */
  parseScore?: (reply: string) => number;
  /** Weight of the judge's score in the reward (default 1). */
  weight?: number;
  /** Sampling for the judge (default temperature 0, 64 tokens). */
  judgeSamplingArgs?: { temperature?: number; max_tokens?: number };
  /** Name of the reward function (default "judgeReward"). */
  name?: string;
}

/**
 * Reads a judge's verdict as a score in [0, 1]: a "Verdict: yes|no" line (the last one; reasoning may
 * come before it) → 1/0, else "yes"/"no" → 1/0, "Score: 7" or "7/10" → 0.7, a bare number in [0, 1] as
 * itself. Throws when the reply holds no verdict.
 */
export function parseJudgeScore(reply: string): number {
  const text = reply.trim().toLowerCase();
  const verdict = [...text.matchAll(/verdict\s*[:=]\s*\**\s*(yes|no)\b/g)].at(-1);
  if (verdict) return verdict[1] === 'yes' ? 1 : 0;
  const fraction = text.match(/(-?\d+(?:\.\d+)?)\s*\/\s*(\d+(?:\.\d+)?)/);
  if (fraction) return clamp01(Number(fraction[1]) / Number(fraction[2]));
  const labelled = text.match(/(?:score|grade|rating)\s*[:=]?\s*(-?\d+(?:\.\d+)?)/);
  const bare = text.match(/^(-?\d+(?:\.\d+)?)\b/);
  const number = labelled?.[1] ?? bare?.[1];
  if (number !== undefined) {
    const value = Number(number);
    return clamp01(value > 1 ? value / 10 : value);
  }
  if (/^\W*yes\b/.test(text)) return 1;
  if (/^\W*no\b/.test(text)) return 0;
  throw new Error(`the judge's reply holds no score: "${reply.slice(0, 120)}"`);
}

/** Fills `{name}` placeholders; unknown placeholders are left as they are. */
export function fillTemplate(template: string, values: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (whole, key: string) => values[key] ?? whole);
}

/** A rubric whose main reward asks a judge model; add more functions with `addReward` as usual. */
export class JudgeRubric<S extends State = State> extends Rubric<S> {
  constructor(options: JudgeRubricOptions) {
    super();
    const { judgeClient, judgeModel = 'default', judgePrompt = DEFAULT_JUDGE_PROMPT, parseScore = parseJudgeScore } = options;
    const sampling = { temperature: 0, max_tokens: 64, ...options.judgeSamplingArgs };
    const judge = async (ctx: RewardContext<S>): Promise<number> => {
      const question = [...ctx.prompt].reverse().find((message) => message.role === 'user')?.content ?? '';
      const prompt = fillTemplate(judgePrompt, {
        question,
        answer: ctx.answer ?? '',
        response: ctx.parser.parseAnswer(ctx.completion) ?? completionText(ctx.completion),
      });
      let reply;
      try {
        reply = await judgeClient.chat.completions.create({ model: judgeModel, messages: [{ role: 'user', content: prompt }], ...sampling });
      } catch (error) {
        // An unreachable or refusing judge is an error of the run (fatal), never a silent 0.
        throw toJudgeError(error);
      }
      const text = reply.choices[0]?.message.content ?? '';
      const state: State = ctx.state;
      state.judgeReplies = [...((state.judgeReplies as string[] | undefined) ?? []), text];
      return parseScore(text);
    };
    this.addReward(judge, options.weight ?? 1, options.name ?? 'judgeReward');
  }
}

function clamp01(value: number): number {
  if (!Number.isFinite(value)) throw new Error(`the judge's score is not a number: ${value}`);
  return Math.min(1, Math.max(0, value));
}
