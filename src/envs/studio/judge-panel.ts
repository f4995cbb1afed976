/**
 * A panel of judges behind one ChatClient: lent to an environment in place of a single judge (as
 * `args.judgeClient`), it sends every judge request to each judge of the panel, reads each reply as
 * one score (`parseJudgeScore`: "Verdict: yes", "Score: 7", "7/10"), aggregates the scores
 * (`aggregatePanelScores`) and answers with that one score, which the environment's judge rubric
 * reads as it would a single judge's ("Score: 7.50/10" for the mean, "Verdict: yes|no" for a
 * majority or unanimity). Every call is logged with each judge's score, so the panel's agreement
 * (`panelAgreement`) and the calls where the judges split can be reported after the run.
 * A judge that cannot be reached or refuses fails the call, naming the judge (the rubric stops the
 * run, as for one judge); a judge whose reply holds no score does not vote on that call, and when no
 * judge gave a score the reply says so and the rubric records the rollout as not scored.
 * It reads one score per reply: it suits `JudgeRubric`-style prompts, not a checklist that asks for
 * several verdicts in one reply (`CriteriaRubric`).
 */
import { ChatClientError, type ChatClient, type ChatCompletion, type ChatRequest } from '../client.ts';
import { parseJudgeScore } from '../judge-rubric.ts';
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
}

/** The panel's figures over its calls, for summaries and metadata.json. */
export interface PanelReport {
  judges: string[];
  aggregation: PanelAggregation;
  calls: number;
  /** Calls where no judge gave a score. */
  unscored: number;
  agreement: Omit<PanelAgreement, 'perItem' | 'split'>;
  /** Indices (in call order) of the calls where the judges split. */
  splitCalls: number[];
}

/** A ChatClient that asks a panel of judges and answers with their aggregated score; see the module comment. */
export class JudgePanelClient implements ChatClient {
  /** Every call answered so far, in the order they finished. */
  readonly calls: PanelCall[] = [];

  constructor(
    readonly judges: readonly PanelJudge[],
    readonly aggregation: PanelAggregation = 'mean',
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
        const scores = replies.map((reply) => {
          try {
            return parseJudgeScore(reply);
          } catch {
            return null;
          }
        });
        const given = scores.filter((score): score is number => score !== null);
        const score = given.length === 0 ? null : aggregatePanelScores(given, this.aggregation);
        this.calls.push({ prompt: request.messages.filter((message) => message.role === 'user').at(-1)?.content ?? '', scores, score });
        const content =
          score === null ? `No judge of the panel gave a score (${this.judges.map((judge, i) => `${judge.name}: "${replies[i]!.slice(0, 80)}"`).join('; ')})` : panelReply(score, this.aggregation);
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
      agreement,
      splitCalls: split,
    };
  }
}

/** The reply a judge rubric reads as the aggregated score. */
function panelReply(score: number, aggregation: PanelAggregation): string {
  return aggregation === 'mean' ? `Score: ${(score * 10).toFixed(2)}/10` : `Verdict: ${score >= 0.5 ? 'yes' : 'no'}`;
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
    `judge panel: ${report.judges.join(', ')} (${report.aggregation}), ${report.calls} calls${report.unscored > 0 ? `, ${report.unscored} without any score` : ''}`,
    `  agreement: pairwise ${figure(report.agreement.pairwise)}, Fleiss' kappa ${figure(report.agreement.fleissKappa)} over ${report.agreement.items} calls; split on ${report.splitCalls.length}`,
  ];
  if (splitIds.length > 0) lines.push(`  split rollouts: ${splitIds.slice(0, 20).join(', ')}${splitIds.length > 20 ? ` … and ${splitIds.length - 20} more` : ''}`);
  return lines.join('\n');
}
