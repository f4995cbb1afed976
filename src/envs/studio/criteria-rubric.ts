/**
 * A criteria judge: a rubric of weighted yes/no questions ("Does the answer cite the document?").
 * One judge call per rollout asks every criterion; for each, the judge writes a short reason and
 * then its verdict. Each criterion is its own reward function (named `criterion_<name>`), so each
 * is logged as its own metric; the reasons are kept in `state.criteriaVerdicts`. A judge that fails
 * (unreachable, 4xx, a reply without a verdict for some criterion) raises a fatal `JudgeError`: the
 * rollout records it, and an evaluation stops on it rather than scoring a silent 0.
 * `gateByCriteria` adds reviewed criteria to an existing rubric as a gate on its reward.
 */
import { completionText } from '../messages.ts';
import { Rubric, type RewardContext, type RubricScore } from '../rubric.ts';
import type { ChatClient } from '../client.ts';
import type { State } from '../types.ts';
import { askJudge, JudgeError } from './judge-call.ts';

/** One yes/no question of a criteria rubric. */
export interface Criterion {
  /** A short identifier (letters, digits, _); the reward function is `criterion_<name>`. */
  name: string;
  /** The yes/no question, phrased so that "yes" is good. */
  question: string;
  /** Weight in the reward (default 1; 0 makes it a metric only). */
  weight?: number;
}

/** The judge's verdict on one criterion. */
export interface CriterionVerdict {
  name: string;
  reason: string;
  verdict: boolean;
}

/** Options of a criteria rubric. */
export interface CriteriaRubricOptions {
  judgeClient: ChatClient;
  judgeModel?: string;
  criteria: readonly Criterion[];
  /** Tokens the judge may write (default 768). */
  maxTokens?: number;
}

/** The judge prompt for a rollout: the task, the response and the numbered criteria, with the reply format. */
export function criteriaPrompt(question: string, response: string, criteria: readonly Criterion[], reference?: string): string {
  return `You are reviewing a response against a checklist.

Task:
${question}
${reference ? `\nReference answer:\n${reference}\n` : ''}
Response:
${response}

Checklist:
${criteria.map((criterion, i) => `${i + 1}. ${criterion.question}`).join('\n')}

For each item, write one line "N. Reason: <one short sentence> Verdict: yes" or "... Verdict: no", in order.`;
}

/** Reads the verdicts of `count` criteria from the judge's reply; throws a `JudgeError` naming the first item without a verdict. */
export function parseCriteriaVerdicts(reply: string, criteria: readonly Criterion[]): CriterionVerdict[] {
  const found = new Map<number, { reason: string; verdict: boolean }>();
  for (const line of reply.split('\n')) {
    const match = /^\s*\**\s*(\d+)[.)]\s*(?:\**\s*reason\s*\**\s*[:=]\s*)?(.*?)\s*\**verdict\**\s*[:=]\s*\**\s*(yes|no)\b/i.exec(line);
    if (match) found.set(Number(match[1]), { reason: match[2]!.trim().replace(/[\s\-–—,;]+$/, ''), verdict: match[3]!.toLowerCase() === 'yes' });
  }
  return criteria.map((criterion, i) => {
    const verdict = found.get(i + 1);
    if (!verdict) throw new JudgeError(`the judge gave no verdict for criterion ${i + 1} ("${criterion.question}"): "${reply.slice(0, 160)}"`, 'no-verdict');
    return { name: criterion.name, ...verdict };
  });
}

/** Checks criteria names: non-empty, identifier-like, unique. */
function checkCriteria(criteria: readonly Criterion[]): void {
  if (criteria.length === 0) throw new Error('CriteriaRubric: give at least one criterion');
  const names = new Set<string>();
  for (const criterion of criteria) {
    if (!/^\w+$/.test(criterion.name)) throw new Error(`CriteriaRubric: criterion name "${criterion.name}" must be letters, digits or _`);
    if (names.has(criterion.name)) throw new Error(`CriteriaRubric: two criteria are named "${criterion.name}"`);
    if (criterion.question.trim() === '') throw new Error(`CriteriaRubric: criterion "${criterion.name}" has no question`);
    names.add(criterion.name);
  }
}

/** A rubric of weighted yes/no criteria answered by a judge; see the module comment. */
export class CriteriaRubric<S extends State = State> extends Rubric<S> {
  readonly criteria: readonly Criterion[];

  constructor(options: CriteriaRubricOptions) {
    super();
    checkCriteria(options.criteria);
    this.criteria = options.criteria;
    const verdicts = new WeakMap<object, Promise<CriterionVerdict[]>>();
    const judgeRollout = (ctx: RewardContext<S>): Promise<CriterionVerdict[]> => {
      let pending = verdicts.get(ctx.state);
      if (!pending) {
        const question = [...ctx.prompt].reverse().find((message) => message.role === 'user')?.content ?? '';
        const response = ctx.parser.parseAnswer(ctx.completion) ?? completionText(ctx.completion);
        pending = askJudge({ client: options.judgeClient, model: options.judgeModel, maxTokens: options.maxTokens ?? 768 }, criteriaPrompt(question, response, this.criteria, ctx.answer)).then(
          (reply) => {
            const parsed = parseCriteriaVerdicts(reply, this.criteria);
            const state: State = ctx.state;
            state.criteriaVerdicts = parsed;
            return parsed;
          },
        );
        verdicts.set(ctx.state, pending);
      }
      return pending;
    };
    this.criteria.forEach((criterion, i) => {
      this.addReward(async (ctx) => ((await judgeRollout(ctx))[i]!.verdict ? 1 : 0), criterion.weight ?? 1, `criterion_${criterion.name}`);
    });
  }
}

/**
 * Makes reviewed criteria a gate on an environment's rubric, in place: the criteria are merged in
 * (each still logged as `criterion_<name>`, its weight its share of the gate), and a rollout's reward
 * becomes the rubric's own reward × the weighted fraction of criteria met (kept in `state.criteriaGate`).
 * A response that meets every criterion keeps the reward the rubric gave it; one that meets none gets
 * 0 however much the judge was fooled into paying, so it cannot pass. Group rewards are gated alike.
 */
export function gateByCriteria<S extends State>(rubric: Rubric<S>, criteria: CriteriaRubric<S>): Rubric<S> {
  const gate = criteria.rewards.map(({ name, weight }) => ({ name, weight }));
  const total = gate.reduce((sum, { weight }) => sum + weight, 0);
  if (!(total > 0)) throw new Error('gateByCriteria: the criteria weigh nothing (every weight is 0), so they cannot gate the reward; give at least one a positive weight');
  const gated = new Set(gate.map(({ name }) => name));
  rubric.merge(criteria);
  const ownScore = rubric.score.bind(rubric);
  const ownScoreGroup = rubric.scoreGroup.bind(rubric);
  rubric.score = async (ctx: RewardContext<S>): Promise<RubricScore> => {
    const verdict = await ownScore(ctx);
    // The rubric's own reward, summed in its order without the criteria; then the weighted fraction met.
    const own = rubric.rewards.filter(({ name }) => !gated.has(name)).reduce((sum, { name, weight }) => sum + weight * (verdict.scores[name] ?? 0), 0);
    const fraction = gate.reduce((sum, { name, weight }) => sum + weight * (verdict.scores[name] ?? 0), 0) / total;
    const state: State = ctx.state;
    state.criteriaGate = fraction;
    return { ...verdict, reward: own * fraction };
  };
  // A rollout whose criteria were never scored has no gate: its group rewards count for nothing.
  rubric.scoreGroup = async (group: RewardContext<S>[]): Promise<RubricScore[]> =>
    (await ownScoreGroup(group)).map((verdict, i) => {
      const fraction = (group[i]!.state as State).criteriaGate;
      return { ...verdict, reward: verdict.reward * (typeof fraction === 'number' ? fraction : 0) };
    });
  return rubric;
}
