/**
 * Rubric extraction: a judge reads examples — rollouts an audit flagged, rollouts that failed, or
 * tasks from traces — and proposes yes/no criteria for a criteria judge. The person reviews them
 * and adds the ones they want to the environment (`criteriaRubricSnippet` writes the code).
 */
import type { ChatClient } from '../client.ts';
import type { Criterion } from './criteria-rubric.ts';
import { askJudge, JudgeError } from './judge-call.ts';
import { parseJsonLeniently } from './lenient-json.ts';

/** One example shown to the judge. */
export interface CriteriaExample {
  question: string;
  response?: string;
  /** Why it is shown: "flagged: …", "failed", "reward 1.0 but …". */
  note?: string;
}

/** Options of `proposeCriteria`. */
export interface ProposeCriteriaOptions {
  judge: ChatClient;
  judgeModel?: string;
  examples: readonly CriteriaExample[];
  taskDescription?: string;
  /** Criteria to ask for at most (default 5). */
  max?: number;
  /** 'failures' (default): the examples went wrong, criteria should catch that; 'tasks': draft criteria for grading such tasks. */
  purpose?: 'failures' | 'tasks';
  signal?: AbortSignal;
}

/** The judge's prompt for proposing criteria. */
export function proposeCriteriaPrompt(options: Omit<ProposeCriteriaOptions, 'judge' | 'judgeModel' | 'signal'>): string {
  const max = options.max ?? 5;
  const intro =
    (options.purpose ?? 'failures') === 'failures'
      ? 'These responses were flagged or failed: they got reward they did not deserve, or missed what the task wants. Propose yes/no criteria a grader should check so that such responses lose reward.'
      : 'These are tasks a deployed assistant was given. Propose yes/no criteria a grader should check to decide whether a response to such a task is good.';
  const examples = options.examples
    .slice(0, 10)
    .map((example, i) => `Example ${i + 1}${example.note ? ` (${example.note})` : ''}:\nTask: ${example.question}${example.response !== undefined ? `\nResponse: ${example.response}` : ''}`)
    .join('\n\n');
  return `${intro}
${options.taskDescription ? `\nWhat the task asks:\n${options.taskDescription}\n` : ''}
${examples}

Write at most ${max} criteria, each a question where "yes" means good. Reply with JSON only:
[{"name": "short_snake_case_name", "question": "Does the response ...?"}]`;
}

/** Asks the judge for criteria; throws a `JudgeError` when the judge fails or its reply holds no criteria. */
export async function proposeCriteria(options: ProposeCriteriaOptions): Promise<Criterion[]> {
  if (options.examples.length === 0) throw new Error('proposeCriteria: give at least one example');
  const reply = await askJudge({ client: options.judge, model: options.judgeModel, maxTokens: 768, ...(options.signal ? { signal: options.signal } : {}) }, proposeCriteriaPrompt(options));
  const value = parseJsonLeniently(reply);
  const list = Array.isArray(value) ? value : typeof value === 'object' && value !== null ? Object.values(value).find(Array.isArray) : undefined;
  const criteria: Criterion[] = [];
  const names = new Set<string>();
  for (const item of (list ?? []) as unknown[]) {
    const question = typeof item === 'string' ? item : typeof item === 'object' && item !== null ? (item as { question?: unknown }).question : undefined;
    if (typeof question !== 'string' || question.trim() === '') continue;
    const given = typeof item === 'object' && item !== null ? (item as { name?: unknown }).name : undefined;
    let name = slug(typeof given === 'string' && given.trim() !== '' ? given : question);
    for (let n = 2; names.has(name); n++) name = `${slug(typeof given === 'string' ? given : question)}_${n}`;
    names.add(name);
    criteria.push({ name, question: question.trim(), weight: 1 });
  }
  if (criteria.length === 0) throw new JudgeError(`the judge proposed no criteria (expected a JSON list of {"name", "question"}): "${reply.slice(0, 160)}"`, 'no-verdict');
  return criteria.slice(0, options.max ?? 5);
}

/** A snake_case identifier from free text (at most 40 characters). */
export function slug(text: string): string {
  const words = text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim()
    .split(' ')
    .filter((word) => word !== '' && !['does', 'the', 'a', 'an', 'is', 'it'].includes(word));
  const name = words.join('_').slice(0, 40).replace(/_+$/, '');
  return name === '' ? 'criterion' : /^\d/.test(name) ? `c_${name}` : name;
}

/** TypeScript that adds `criteria` to an environment as a criteria judge gating its rubric's reward (paste into an environment file that receives `args.judgeClient`, before it returns the environment). */
export function criteriaRubricSnippet(criteria: readonly Criterion[]): string {
  return `import { CriteriaRubric, gateByCriteria } from 'tabrl/studio';

// Criteria proposed by the judge and reviewed by you; each is logged as its own metric (criterion_<name>).
const criteria = new CriteriaRubric({
  judgeClient: args.judgeClient, // lent by tabrl: --judge-base-url URL --judge-model NAME
  judgeModel: args.judgeModel,
  criteria: ${JSON.stringify(criteria, null, 2).replace(/\n/g, '\n  ')},
});
// They gate the reward: the rubric's own reward × the weighted fraction of criteria met.
gateByCriteria(rubric, criteria);
`;
}
