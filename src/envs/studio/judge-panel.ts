/**
 * A panel of judges behind one ChatClient: lent to an environment in place of a single judge (as
 * `args.judgeClient`), it sends every judge request to each judge of the panel, reads each reply as
 * one score on the scale the judge prompt asks for (`judgeScaleOf`, `parseJudgeScore`: "Score: 7"
 * of a 0–10 grade is 0.7, "Verdict: yes" of a yes/no prompt 1), aggregates the scores
 * (`aggregatePanelScores`) and answers with that one score on the same scale, which the
 * environment's judge rubric reads as it would a single judge's ("Score: 7.5/10" for the mean of a
 * 0–10 grade, "Verdict: yes|no" for a majority or unanimity). Every call is
 * logged with each judge's score, so the panel's agreement (`panelAgreement`) and the calls where
 * the judges split can be reported after the run.
 * A judge that cannot be reached or refuses fails the call, naming the judge (the rubric stops the
 * run, as for one judge); a judge whose reply holds no score, or answers off the prompt's scale, does
 * not vote on that call (the call keeps why, and the report counts the replies off the scale), and
 * when no judge gave a score the reply says so and the rubric records the rollout as not scored.
 * It reads one score per reply: it suits `JudgeRubric`-style prompts, not a checklist that asks for
 * several verdicts in one reply (`CriteriaRubric`).
 */
import { ChatClientError, type ChatClient, type ChatCompletion, type ChatRequest } from '../client.ts';
import { judgeScaleOf, parseJudgeScore, type JudgeScale } from '../judge-score.ts';
import { JudgeError } from './judge-call.ts';
import { errorMessage } from '../../common/error-message.ts';
import { aggregatePanelScores, itemAgreement, PANEL_YES_AT, panelAgreement, type PanelAgreement, type PanelAggregation } from './panel-agreement.ts';

/** One judge of a panel. */
export interface PanelJudge {
  /** A short name for reports ("judge-1", "qwen-7b"). */
  name: string;
  client: ChatClient;
  /** Model name sent to this judge (default "default"). */
  model?: string;
}

/** One call the panel answered. */
export interface PanelCall {
  /** The last user message the judges were sent (the judge prompt). */
  prompt: string;
  /** Each judge's score, in panel order; null where its reply held none. */
  scores: (number | null)[];
  /** The aggregated score, or null when no judge gave one. */
  score: number | null;
  /** Why each judge gave no score (null where it gave one), when some did not. */
  noScoreReasons?: (string | null)[];
  /** Each judge whose reply was off the scale the prompt asked for (true), when some were. */
  offScale?: boolean[];
}

/** The panel's figures over its calls, for summaries and metadata.json. */
export interface PanelReport {
  judges: string[];
  aggregation: PanelAggregation;
  calls: number;
  /** Calls where no judge gave a score. */
  unscored: number;
  /** Judge replies off the scale the prompt asked for (each one a vote left out). */
  offScaleReplies: number;
  agreement: Omit<PanelAgreement, 'perItem' | 'split'>;
  /** Indices (in call order) of the calls where the judges split. */
  splitCalls: number[];
}

/** A ChatClient that asks a panel of judges and answers with their aggregated score; see the module comment. */
export class JudgePanelClient implements ChatClient {
  /** Every call answered so far, in the order they finished. */
  readonly calls: PanelCall[] = [];

  /**
   * `scale` fixes the scale replies are read on; by default each call reads it from its prompt (the
   * last phrase that names one, as `judgeScaleOf` does).
   */
  constructor(
    readonly judges: readonly PanelJudge[],
    readonly aggregation: PanelAggregation = 'mean',
    readonly scale?: JudgeScale,
  ) {
    if (judges.length < 2) throw new Error(`a judge panel needs two or more judges, got ${judges.length}`);
  }

  readonly chat = {
    completions: {
      create: async (request: ChatRequest): Promise<ChatCompletion> => {
        const replies = await Promise.all(
          this.judges.map(async (judge) => {
            try {
              const reply = await judge.client.chat.completions.create({ ...request, model: judge.model ?? 'default' });
              return reply.choices[0]?.message.content ?? '';
            } catch (error) {
              if (error instanceof ChatClientError) throw new ChatClientError(`judge ${judge.name}: ${error.message}`, error.kind, error.status);
              throw new Error(`judge ${judge.name}: ${errorMessage(error)}`);
            }
          }),
        );
        const prompt = request.messages.filter((message) => message.role === 'user').at(-1)?.content ?? '';
        const scale = this.scale ?? judgeScaleOf(prompt);
        const read = replies.map((reply): { score: number | null; reason: string | null; offScale: boolean } => {
          if (!scale) return { score: null, reason: 'the judge prompt names no scale (a grade from min to max, or a yes/no verdict), so no reply can be read', offScale: false };
          try {
            return { score: parseJudgeScore(reply, scale), reason: null, offScale: false };
          } catch (error) {
            return { score: null, reason: errorMessage(error), offScale: error instanceof JudgeError && error.kind === 'off-scale' };
          }
        });
        const scores = read.map((entry) => entry.score);
        const given = scores.filter((score): score is number => score !== null);
        const score = given.length === 0 ? null : aggregatePanelScores(given, this.aggregation);
        this.calls.push({
          prompt,
          scores,
          score,
          ...(given.length < scores.length ? { noScoreReasons: read.map((entry) => entry.reason) } : {}),
          ...(read.some((entry) => entry.offScale) ? { offScale: read.map((entry) => entry.offScale) } : {}),
        });
        const content =
          score === null || !scale
            ? // Not opening with "no": a reply that does is read as a "no" verdict.
              `The judge panel has no score, as none of its judges gave one (${this.judges.map((judge, i) => `${judge.name}: ${!scale ? 'the prompt names no scale' : read[i]!.offScale ? 'off the scale' : 'no score'}`).join('; ')})`
            : panelReply(score, this.aggregation, scale);
        return { id: 'judge-panel', model: request.model, choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }] };
      },
    },
  };

  /** The panel's judges, aggregation and agreement over the calls so far. */
  report(): PanelReport {
    const { perItem: _perItem, split, ...agreement } = panelAgreement(this.calls.map((call) => call.scores));
    return {
      judges: this.judges.map((judge) => judge.name),
      aggregation: this.aggregation,
      calls: this.calls.length,
      unscored: this.calls.filter((call) => call.score === null).length,
      offScaleReplies: this.calls.reduce((sum, call) => sum + (call.offScale ?? []).filter(Boolean).length, 0),
      agreement,
      splitCalls: split,
    };
  }
}

/**
 * The reply a judge rubric reads as the aggregated score `score` (in [0, 1]) on the prompt's scale: a
 * verdict for a majority or unanimity; a mean as a grade over the scale's top ("Score: 7.5/10"), or
 * on a yes/no prompt as the fraction it is ("Score: 66.6667/100").
 */
function panelReply(score: number, aggregation: PanelAggregation, scale: JudgeScale): string {
  const figure = (value: number) => String(Number(value.toFixed(4)));
  if (aggregation !== 'mean') return `Verdict: ${score >= 0.5 ? 'yes' : 'no'}`;
  return scale.kind === 'grade' ? `Score: ${figure(scale.min + score * (scale.max - scale.min))}/${scale.max}` : `Score: ${figure(score * 100)}/100`;
}

/** Which rollouts the calls judged: a call whose prompt holds the rollout's question and response (both non-empty); ids of the rollouts whose calls split. */
export function splitRollouts(calls: readonly PanelCall[], splitCalls: readonly number[], rollouts: readonly { id: string; question: string; response: string }[]): string[] {
  const splitPrompts = splitCalls.map((index) => calls[index]!.prompt);
  return rollouts
    .filter(
      (rollout) =>
        rollout.question.trim() !== '' && rollout.response.trim() !== '' && splitPrompts.some((prompt) => prompt.includes(rollout.question.trim()) && prompt.includes(rollout.response.trim())),
    )
    .map((rollout) => rollout.id);
}

/** One rollout's votes on a panel: each judge's score (null where it gave none), the share of agreeing pairs, and whether the judges split. */
export interface PanelRolloutVotes {
  id: string;
  /** Each judge's score in panel order; empty when no call of the panel matched the rollout. */
  scores: (number | null)[];
  /** Share of judge pairs that voted alike; null with fewer than two votes or no matching call. */
  agreement: number | null;
  split: boolean;
}

/** Each rollout's votes, from the panel call whose prompt holds its question and response (the last such call, matched as `splitRollouts` does). */
export function panelRolloutVotes(calls: readonly PanelCall[], rollouts: readonly { id: string; question: string; response: string }[]): PanelRolloutVotes[] {
  return rollouts.map((rollout) => {
    const question = rollout.question.trim();
    const response = rollout.response.trim();
    const call = question === '' || response === '' ? undefined : calls.findLast((entry) => entry.prompt.includes(question) && entry.prompt.includes(response));
    if (!call) return { id: rollout.id, scores: [], agreement: null, split: false };
    const agreement = itemAgreement(call.scores.filter((score): score is number => score !== null).map((score) => score >= PANEL_YES_AT));
    return { id: rollout.id, scores: call.scores, agreement, split: agreement !== null && agreement < 1 };
  });
}

/** The panel report as readable lines. */
export function formatPanelReport(report: PanelReport, splitIds: readonly string[] = []): string {
  const figure = (value: number | null) => (value === null ? 'n/a' : value.toFixed(3));
  const lines = [
    `judge panel: ${report.judges.join(', ')} (${report.aggregation}), ${report.calls} calls${report.unscored > 0 ? `, ${report.unscored} without any score` : ''}${report.offScaleReplies > 0 ? `, ${report.offScaleReplies} replies off the prompt's scale (left out of the vote)` : ''}`,
    `  agreement: pairwise ${figure(report.agreement.pairwise)}, Fleiss' kappa ${figure(report.agreement.fleissKappa)} over ${report.agreement.items} calls; split on ${report.splitCalls.length}`,
  ];
  if (splitIds.length > 0) lines.push(`  split rollouts: ${splitIds.slice(0, 20).join(', ')}${splitIds.length > 20 ? ` … and ${splitIds.length - 20} more` : ''}`);
  return lines.join('\n');
}
