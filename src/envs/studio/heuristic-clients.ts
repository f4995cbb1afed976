/**
 * Offline stand-ins for the studio's three model roles, so the whole workflow (synthesis,
 * calibration, audit, criteria) runs without a model — in tests, lessons and the playground's
 * "heuristic judge". They read the studio's own prompts and answer by rule; they are transparent
 * rules, not models, and say so in their replies' reasons.
 * - generator: cloze questions from the passage's sentences (the answer is a number, a name or the
 *   longest word of the sentence);
 * - solver: with the passage, it fills the blank from the passage (where the sentence stands word for
 *   word, else from the sentence sharing most words); without it, it does not know;
 * - judge: answer matching (normalised containment), checklists and hindsight audits by checking
 *   the constraints a task states ("uses the word "X"", "two-line", a reference answer), and
 *   criteria proposals from those constraints.
 */
import type { ChatClient, ChatCompletion, ChatRequest } from '../client.ts';
import { normalizeAnswer } from './answer-match.ts';
import { PASSAGE_OPEN } from './synthesize.ts';

/** Which role an offline client plays. */
export type HeuristicRole = 'generator' | 'solver' | 'judge';

/** A ChatClient that plays one studio role by rule; see the module comment. */
export class HeuristicStudioClient implements ChatClient {
  constructor(readonly role: HeuristicRole) {}

  readonly chat = {
    completions: {
      create: async (request: ChatRequest): Promise<ChatCompletion> => {
        const prompt = request.messages.filter((message) => message.role === 'user').at(-1)?.content ?? '';
        const content = this.role === 'generator' ? heuristicGenerate(prompt) : this.role === 'solver' ? heuristicSolve(prompt) : heuristicJudge(prompt);
        return { id: `heuristic-${this.role}`, model: request.model, choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }] };
      },
    },
  };
}

/** The three offline clients. */
export function createHeuristicStudioClients(): { generator: ChatClient; solver: ChatClient; judge: ChatClient } {
  return { generator: new HeuristicStudioClient('generator'), solver: new HeuristicStudioClient('solver'), judge: new HeuristicStudioClient('judge') };
}

const BLANK = '____';

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\s+/g, '\\s+');

function passageOf(prompt: string): string | undefined {
  return /<<<\n([\s\S]*?)\n>>>/.exec(prompt)?.[1];
}

function sentencesOf(text: string): string[] {
  return text
    .replace(/^#+\s.*$/gm, '')
    .split(/(?<=[.!?])\s+/)
    .map((sentence) => sentence.replace(/\s+/g, ' ').trim())
    .filter((sentence) => sentence.split(' ').length >= 5);
}

/** The word of a sentence a cloze question hides: a number, else a capitalised word not at the start, else the longest word. */
function clozeTarget(sentence: string): string | undefined {
  const words = sentence.replace(/[.!?,;:]+$/, '').split(' ');
  const clean = (word: string) => word.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');
  const number = words.map(clean).find((word) => /^\d[\d.,]*$/.test(word));
  if (number) return number;
  const name = words
    .slice(1)
    .map(clean)
    .find((word) => /^\p{Lu}\p{Ll}+$/u.test(word));
  if (name) return name;
  return words
    .map(clean)
    .filter((word) => word.length >= 4)
    .sort((a, b) => b.length - a.length)[0];
}

function heuristicGenerate(prompt: string): string {
  const passage = passageOf(prompt) ?? '';
  const count = Number(/Write (\d+) questions/.exec(prompt)?.[1] ?? 3);
  const pairs = sentencesOf(passage).flatMap((sentence) => {
    const target = clozeTarget(sentence);
    if (!target) return [];
    // The target as a whole word: "Ida" must not blank the start of "Idaho".
    const question = sentence.replace(new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(target)}(?![\\p{L}\\p{N}])`, 'u'), BLANK);
    return [{ question: `Fill in the blank from the document: "${question}"`, answer: target }];
  });
  return JSON.stringify(pairs.slice(0, count));
}

function heuristicSolve(prompt: string): string {
  if (!prompt.includes(PASSAGE_OPEN)) return 'I do not know.';
  const passage = passageOf(prompt) ?? '';
  const question = /Question: ([\s\S]*?)\n\nReply/.exec(prompt)?.[1] ?? '';
  // The cloze: the quoted sentence with the blank (quotes inside it are allowed), else the question itself.
  const cloze = /"(.*____.*)"/.exec(question)?.[1] ?? (question.includes(BLANK) ? question : undefined);
  if (cloze) {
    const answer = fillVerbatim(cloze, passage) ?? fillAligned(cloze, passage);
    if (answer) return answer;
  }
  const words = new Set(normalizeAnswer(question).split(' '));
  const best = sentencesOf(passage).sort((a, b) => overlap(b, words) - overlap(a, words))[0];
  return best ?? 'I do not know.';
}

/**
 * The blank's filler where the cloze's sentence stands in the passage word for word. An empty side is
 * anchored at a sentence start or end, so a blank that opens a sentence takes that sentence's first
 * words rather than the passage up to them.
 */
function fillVerbatim(cloze: string, passage: string): string | undefined {
  const [before = '', after = ''] = cloze.split(BLANK);
  const left = before.trim() === '' ? '(?:^|(?<=[.!?]\\s))' : escapeRegExp(before.slice(-40));
  const right = /^[.!?]*$/.test(after.trim()) ? '(?=[.!?,;:]*(?:\\s|$))' : escapeRegExp(after.slice(0, 40));
  // The filler stays inside one sentence (no sentence end followed by a space), so "3.5" is one word.
  const found = new RegExp(`${left}(\\S(?:[^.!?]|[.!?](?!\\s))*?)${right}`).exec(passage.replace(/\s+/g, ' '));
  return found?.[1]?.trim() || undefined;
}

/**
 * The blank's filler where the passage says it in other words: the sentence sharing most words with
 * the cloze, read from the word after the last one the cloze has before the blank up to the first it
 * has after it (the passage's words the question lacks, when neither side is found).
 */
function fillAligned(cloze: string, passage: string): string | undefined {
  const [before = '', after = ''] = cloze.split(BLANK).map(normalizeAnswer);
  const clozeWords = new Set(`${before} ${after}`.split(' ').filter(Boolean));
  const sentence = sentencesOf(passage).sort((a, b) => overlap(b, clozeWords) - overlap(a, clozeWords))[0];
  if (!sentence || overlap(sentence, clozeWords) === 0) return undefined;
  const tokens = sentence.split(' ');
  const norm = tokens.map((token) => normalizeAnswer(token));
  const lastBefore = before.split(' ').filter(Boolean).at(-1);
  const firstAfter = after.split(' ').filter(Boolean)[0];
  const from = lastBefore === undefined ? 0 : norm.indexOf(lastBefore) + 1;
  if (from > 0 || lastBefore === undefined) {
    const until = firstAfter === undefined ? -1 : norm.indexOf(firstAfter, from);
    const span = tokens.slice(from, until > from ? until : from + 1).join(' ');
    if (span !== '' && !clozeWords.has(normalizeAnswer(span))) return span.replace(/[.!?,;:]+$/, '');
  }
  return tokens.find((_token, index) => norm[index] !== '' && !clozeWords.has(norm[index]!))?.replace(/[.!?,;:]+$/, '');
}

function overlap(sentence: string, words: Set<string>): number {
  return normalizeAnswer(sentence)
    .split(' ')
    .filter((word) => words.has(word)).length;
}

/** Constraints a task states that a rule can check: quoted words, a line count. */
function constraintsOf(task: string): { words: string[]; lines?: number } {
  const words = [...task.matchAll(/(?:word|term|phrase)s?\s+"([^"]+)"/gi)].map((match) => match[1]!);
  const count = /\b(one|two|three|four|\d+)[- ]line\b/i.exec(task)?.[1]?.toLowerCase();
  const numbers: Record<string, number> = { one: 1, two: 2, three: 3, four: 4 };
  const lines = count === undefined ? undefined : (numbers[count] ?? Number(count));
  return { words, ...(lines !== undefined ? { lines } : {}) };
}

function nonEmptyLines(text: string): number {
  return text.split('\n').filter((line) => line.trim() !== '').length;
}

/** Checks the task's constraints on a response; returns the failures in words. */
function constraintFailures(task: string, response: string, reference?: string): string[] {
  const { words, lines } = constraintsOf(task);
  const failures = words.filter((word) => !new RegExp(`\\b${word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`, 'i').test(response)).map((word) => `it does not use "${word}"`);
  if (lines !== undefined && nonEmptyLines(response) !== lines) failures.push(`it has ${nonEmptyLines(response)} line${nonEmptyLines(response) === 1 ? '' : 's'}, not ${lines}`);
  if (reference && !normalizeAnswer(response).includes(normalizeAnswer(reference))) failures.push('it does not contain the reference answer');
  return failures;
}

function section(prompt: string, label: string): string | undefined {
  return new RegExp(`${label}:\\n([\\s\\S]*?)(?:\\n\\n[A-Z][\\w ]*:|\\n\\nReward:|\\n\\nDid the response|$)`).exec(prompt)?.[1]?.trim();
}

function heuristicJudge(prompt: string): string {
  if (prompt.startsWith('Does the response give the same answer as the reference?')) {
    const reference = /Reference answer: (.*)/.exec(prompt)?.[1] ?? '';
    const response = /Response: ([\s\S]*?)\n\nWrite one short sentence/.exec(prompt)?.[1] ?? '';
    const same = normalizeAnswer(reference) !== '' && normalizeAnswer(response).includes(normalizeAnswer(reference));
    return `Rule: the normalised response ${same ? 'contains' : 'does not contain'} the reference.\nVerdict: ${same ? 'yes' : 'no'}`;
  }
  if (prompt.startsWith('You are reviewing a response against a checklist.')) {
    const task = section(prompt, 'Task') ?? '';
    const response = /Response:\n([\s\S]*?)\n\nChecklist:/.exec(prompt)?.[1] ?? '';
    const items = [...(/Checklist:\n([\s\S]*?)\n\nFor each item/.exec(prompt)?.[1] ?? '').matchAll(/^(\d+)\. (.*)$/gm)];
    return items
      .map(([, n, question]) => {
        const failures = constraintFailures(question!, response).concat(/\btask\b|\bconstraint/i.test(question!) ? constraintFailures(task, response) : []);
        return `${n}. Reason: rule check${failures.length > 0 ? `: ${failures.join('; ')}` : ' passed'}. Verdict: ${failures.length === 0 && response.trim() !== '' ? 'yes' : 'no'}`;
      })
      .join('\n');
  }
  if (prompt.startsWith('You are auditing a reward')) {
    const task = section(prompt, 'Task') ?? '';
    const reference = section(prompt, 'Reference answer');
    const response = /\nResponse:\n([\s\S]*?)\n\nReward:/.exec(prompt)?.[1] ?? '';
    const failures = constraintFailures(task, response, reference);
    return failures.length === 0 ? 'Rule: the response meets every constraint the task states.\nVerdict: yes' : `Rule: ${failures.join('; ')}.\nVerdict: no`;
  }
  if (prompt.includes('Propose yes/no criteria')) {
    const tasks = [...prompt.matchAll(/^Task: (.*)$/gm)].map((match) => match[1]!);
    const criteria: { name: string; question: string }[] = [];
    if (tasks.some((task) => constraintsOf(task).words.length > 0)) criteria.push({ name: 'uses_required_word', question: 'Does the response use the word the task requires?' });
    const lines = tasks.map((task) => constraintsOf(task).lines).find((count) => count !== undefined);
    if (lines !== undefined) criteria.push({ name: 'line_count', question: `Does the response follow the task's ${lines}-line constraint?` });
    criteria.push({ name: 'meets_task_constraints', question: 'Does the response meet every constraint the task states?' });
    return JSON.stringify(criteria);
  }
  return "The heuristic judge does not recognise this prompt; it only answers the environment studio's own prompts.";
}
