/**
 * Reading a judge's reply on the scale its prompt asked for. A judge prompt asks either for a grade
 * on a numeric scale ("from 0 to 10", "between 1 and 5", "on a scale of 1-7", "out of 100") or for
 * a yes/no verdict ("Verdict: yes|no"); `judgeScaleOf` finds which in the prompt's wording, and
 * `parseJudgeScore` reads a reply on that scale into [0, 1]: grade g on [min, max] → (g − min) /
 * (max − min). Replies that say their own scale are read as written on any prompt: a yes/no verdict
 * ("Verdict: yes", a reply that opens with a bare "yes," or "no.") is 1 or 0, a fraction ("7/10", "3 / 4") or a
 * percentage its value (a fraction over the scale's top is a grade on the scale). A number off the
 * scale — a grade outside [min, max], or any bare grade where a yes/no verdict was asked — is a
 * `JudgeError` of kind 'off-scale' that quotes the reply and names the scale, never a guess:
 * "Score: 1" on a 0–10 prompt is 0.1, not full marks, and "Score: 14" is off the scale.
 * This module asks no judge; `JudgeRubric` and the studio's judge panel read replies with it.
 */
import { JudgeError } from './studio/judge-call.ts';

/** What a judge prompt asks for: a grade from `min` to `max`, or a yes/no verdict. */
export type JudgeScale = { kind: 'grade'; min: number; max: number } | { kind: 'verdict' };

/** The scale of `DEFAULT_JUDGE_PROMPT`: a grade from 0 to 10. */
export const DEFAULT_JUDGE_SCALE: JudgeScale = { kind: 'grade', min: 0, max: 10 };

/** The scale in words, for messages: "a grade from 0 to 10", "a yes/no verdict". */
export function describeJudgeScale(scale: JudgeScale): string {
  return scale.kind === 'verdict' ? 'a yes/no verdict' : `a grade from ${scale.min} to ${scale.max}`;
}

const NUMBER = String.raw`(-?\d+(?:\.\d+)?)`;
// "from 0 (useless) to 10 (excellent)", "between 1 and 5", "scale of 1-7", "grade 0–10", "a 1 to 5 rating", "out of 100".
const GRADE_WORD = String.raw`\b(?:grade|score|rate|rating|scale|mark|number)\w*\b[^.\n\d"]{0,40}?`;
const RANGE_AFTER_WORD = new RegExp(String.raw`${GRADE_WORD}\b${NUMBER}\s*(?:\([^)\n]{0,30}\)\s*)?(?:to|and|-|–|—)\s*${NUMBER}`, 'gi');
const RANGE_BEFORE_WORD = new RegExp(String.raw`\b${NUMBER}\s*(?:to|-|–|—)\s*${NUMBER}[\s-]*(?:point\s+)?(?:grade|score|rating|scale)\b`, 'gi');
const OUT_OF = new RegExp(String.raw`${GRADE_WORD}\bout\s+of\s+${NUMBER}`, 'gi');
const VERDICT = /\bverdict\s*[:=]\s*"?\s*yes\b|\byes\s*(?:\/|or)\s*no\b/gi;

/**
 * The scale a judge prompt asks for, from its wording (the last phrase that names one, so a template
 * whose instructions follow the text it quotes is read by its instructions); undefined when it names none.
 */
export function judgeScaleOf(prompt: string): JudgeScale | undefined {
  const found: { at: number; scale: JudgeScale }[] = [];
  const grade = (at: number, min: number, max: number) => {
    if (Number.isFinite(min) && Number.isFinite(max) && min < max) found.push({ at, scale: { kind: 'grade', min, max } });
  };
  for (const match of prompt.matchAll(RANGE_AFTER_WORD)) grade(match.index, Number(match[1]), Number(match[2]));
  for (const match of prompt.matchAll(RANGE_BEFORE_WORD)) grade(match.index, Number(match[1]), Number(match[2]));
  for (const match of prompt.matchAll(OUT_OF)) grade(match.index, 0, Number(match[1]));
  for (const match of prompt.matchAll(VERDICT)) found.push({ at: match.index, scale: { kind: 'verdict' } });
  return found.sort((a, b) => a.at - b.at).at(-1)?.scale;
}

/**
 * Reads a judge's reply as a score in [0, 1] on `scale` (default: the default prompt's, 0–10); see
 * the module comment. Throws a `JudgeError` of kind 'off-scale' when the reply answers off the scale,
 * and of kind 'no-verdict' when it holds no score at all.
 */
export function parseJudgeScore(reply: string, scale: JudgeScale = DEFAULT_JUDGE_SCALE): number {
  const text = reply.trim().toLowerCase();
  const quoted = `"${reply.trim().slice(0, 160)}"`;
  const offScale = (what: string) => new JudgeError(`the judge answered ${quoted}, ${what}, off the scale its prompt asked for (${describeJudgeScale(scale)}); the rollout is not scored`, 'off-scale');
  const onGrade = (value: number): number => {
    if (scale.kind !== 'grade') throw offScale(`a grade of ${value}`);
    if (!(value >= scale.min && value <= scale.max)) throw offScale(`a grade of ${value}`);
    return (value - scale.min) / (scale.max - scale.min);
  };
  const onFraction = (numerator: number, denominator: number): number => {
    if (scale.kind === 'grade' && denominator === scale.max) return onGrade(numerator);
    if (!(denominator > 0 && numerator >= 0 && numerator <= denominator)) throw offScale(`${numerator} out of ${denominator}`);
    return numerator / denominator;
  };

  // A verdict means all or nothing on any scale: no scale can misread it.
  const verdict = [...text.matchAll(/verdict\s*[:=]\s*\**\s*(yes|no)\b/g)].at(-1);
  if (verdict) return verdict[1] === 'yes' ? 1 : 0;
  // A labelled score ("Score: 7", "Grade = 3/5", "rating: 80%"): the last one, as reasoning may come first.
  const labelled = [...text.matchAll(new RegExp(String.raw`(?:score|grade|rating)\s*[:=]?\s*\**\s*${NUMBER}\s*(?:(%)|\/\s*${NUMBER})?`, 'g'))].at(-1);
  // Else a reply that opens with a number ("7", "7/10 because …"), else a fraction or percentage anywhere (the last).
  const opening = new RegExp(String.raw`^${NUMBER}\s*(?:(%)|\/\s*${NUMBER})?`).exec(text);
  const anywhere = [...text.matchAll(new RegExp(String.raw`${NUMBER}\s*(?:(%)|\/\s*${NUMBER})`, 'g'))].at(-1);
  const number = labelled ?? opening ?? anywhere;
  if (number) {
    const value = Number(number[1]);
    if (number[2] === '%') return onFraction(value, 100);
    if (number[3] !== undefined) return onFraction(value, Number(number[3]));
    return onGrade(value);
  }
  // A reply that opens with a bare yes or no ("Yes, it is correct.", "no"), not "No idea" or "No score".
  const bareVerdict = /^\W*(yes|no)\s*(?:[.,!;:\n]|$)/.exec(text);
  if (bareVerdict) return bareVerdict[1] === 'yes' ? 1 : 0;
  throw new JudgeError(`the judge's reply holds no score (${describeJudgeScale(scale)} was asked for): ${quoted}`, 'no-verdict');
}
