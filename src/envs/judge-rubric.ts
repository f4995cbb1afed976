/**
 * Rewards without a verifier: a judge model reads the question, the reference answer (if any) and
 * the response, and its reply becomes a score. The judge is any ChatClient, so an API model, a
 * WebLLM model or the in-tab model can judge. A judge that cannot be reached or refuses the request
 * is a fatal error of the run (see studio/judge-call.ts); a reply without a score, or one off the
 * scale the prompt asked for (judge-score.ts), is a recorded error.
 */
import type { ChatClient } from './client.ts';
import { completionText } from './messages.ts';
import { Rubric, type RewardContext } from './rubric.ts';
import { judgeScaleOf, parseJudgeScore, type JudgeScale } from './judge-score.ts';
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
  /** The scale the prompt asks for (default: read from the prompt's wording by `judgeScaleOf`); replies are read on it. */
  scoreScale?: JudgeScale;
  /** Turns the judge's reply into a score; throwing records an error and scores 0. Default: `parseJudgeScore` on the prompt's scale. */
  parseScore?: (reply: string) => number;
  /** Weight of the judge's score in the reward (default 1). */
  weight?: number;
  /** Sampling for the judge (default temperature 0, 64 tokens). */
  judgeSamplingArgs?: { temperature?: number; max_tokens?: number };
  /** Name of the reward function (default "judgeReward"). */
  name?: string;
}

/** Fills `{name}` placeholders; unknown placeholders are left as they are. */
export function fillTemplate(template: string, values: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (whole, key: string) => values[key] ?? whole);
}

/** A rubric whose main reward asks a judge model; add more functions with `addReward` as usual. */
export class JudgeRubric<S extends State = State> extends Rubric<S> {
  constructor(options: JudgeRubricOptions) {
    super();
    const { judgeClient, judgeModel = 'default', judgePrompt = DEFAULT_JUDGE_PROMPT } = options;
    const parseScore = options.parseScore ?? scaleReader(judgePrompt, options.scoreScale);
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

/** `parseJudgeScore` on the scale given or named by the prompt; a prompt that names none is refused, as its replies could not be read without a guess. */
function scaleReader(judgePrompt: string, given: JudgeScale | undefined): (reply: string) => number {
  const scale = given ?? judgeScaleOf(judgePrompt);
  if (!scale) {
    throw new Error(
      `JudgeRubric: the judge prompt names no scale, so a reply such as "Score: 1" could mean full marks or almost none; say it in the prompt ("Grade the response from 0 to 10 …", or "… then a last line "Verdict: yes" or "Verdict: no"") or pass scoreScale ({ kind: 'grade', min: 0, max: 10 } or { kind: 'verdict' })`,
    );
  }
  return (reply) => parseJudgeScore(reply, scale);
}
