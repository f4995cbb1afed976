/**
 * Grounded task synthesis: documents → chunks → question/answer candidates from a generator →
 * verification by a solver that answers each question k times with the chunk in context (open
 * book) → for verified candidates, the same solver without the chunk (closed book). A candidate is
 * kept when its open-book pass rate reaches `minOpenBookPassRate` (and its closed-book pass rate
 * stays at or below `maxClosedBookPassRate`); the gap between the two rates is what grounding adds.
 *
 * Every candidate ends up in the result, kept or rejected with a reason: a reply that is not JSON,
 * an item without an answer, a duplicate, an unanswerable question, a failed call. Candidates are
 * handed to `onCandidate` as soon as they are decided, so a caller can write them at once and an
 * interrupted run keeps them. A fatal client error (unreachable, bad key) or any judge failure stops
 * the run; `stoppedEarly` says why, and the candidates not verified by then are reported as cancelled.
 */
import { ChatClientError, type ChatClient } from '../client.ts';
import { answersMatch, normalizeAnswer } from './answer-match.ts';
import { parseCandidateList } from './candidate-json.ts';
import { chunkDocuments, type Chunk, type ChunkOptions, type StudioDocument } from './chunking.ts';
import { askJudge, JudgeError, parseYesNo } from './judge-call.ts';
import { fillTemplate } from '../judge-rubric.ts';
import { errorMessage } from '../../common/error-message.ts';

/** Why a candidate was rejected. */
export type RejectionCode = 'malformed' | 'duplicate' | 'unanswerable' | 'answerable-closed-book' | 'error' | 'cancelled';

/** Where a task's grounding comes from: a document and the character span of its chunk. */
export interface TaskSource {
  document: string;
  start: number;
  end: number;
  /** The chunk's id (`document#start-end`). */
  chunk: string;
}

/** One candidate and what became of it (a line of tasks.jsonl). */
export interface SynthesizedTask {
  /** Order of creation: chunk by chunk, candidate by candidate. */
  id: number;
  question: string;
  answer: string;
  source: TaskSource;
  /** Share of open-book answers that matched the reference; null when not measured. */
  openBookPassRate: number | null;
  /** Share of closed-book answers that matched; null when not measured (rejected before). */
  closedBookPassRate: number | null;
  kept: boolean;
  rejection?: RejectionCode;
  /** Why it was rejected, in words. */
  reason?: string;
  openBookAnswers?: string[];
  closedBookAnswers?: string[];
  /** For a malformed candidate: what the generator wrote. */
  raw?: string;
}

/** Counts per stage, calls, pass rates and time (report.json). */
export interface SynthesisReport {
  documents: number;
  chunks: number;
  /** Chunks the generator answered for. */
  chunksGenerated: number;
  candidates: number;
  kept: number;
  rejected: number;
  rejections: Record<RejectionCode, number>;
  calls: { generator: number; solver: number; judge: number };
  k: number;
  /** Means over kept tasks; the gap is open − closed. */
  meanOpenBookPassRate: number | null;
  meanClosedBookPassRate: number | null;
  groundingGap: number | null;
  wallMs: number;
  candidatesPerMinute: number;
  stoppedEarly?: string;
}

/** What `synthesizeTasks` returns. */
export interface SynthesisResult {
  tasks: SynthesizedTask[];
  report: SynthesisReport;
}

/** Progress after each decided candidate or generator reply. */
export interface SynthesisProgress {
  chunks: number;
  chunksGenerated: number;
  candidates: number;
  decided: number;
  kept: number;
}

/** Options of `synthesizeTasks`. */
export interface SynthesisOptions {
  documents: readonly StudioDocument[];
  generator: ChatClient;
  solver: ChatClient;
  /** When given, answers are compared by this judge (yes/no) instead of normalised exact match. */
  judge?: ChatClient;
  generatorModel?: string;
  solverModel?: string;
  judgeModel?: string;
  /** Open-book (and closed-book) attempts per candidate (default 3). */
  k?: number;
  /** Questions asked of the generator per chunk (default 3). */
  questionsPerChunk?: number;
  /** Keep a candidate when at least this share of open-book answers match (default 0.5). */
  minOpenBookPassRate?: number;
  /** Reject a candidate the solver answers this often without the document (default 1: never reject). */
  maxClosedBookPassRate?: number;
  /** Model calls in flight (default 8). */
  concurrency?: number;
  chunking?: ChunkOptions;
  /** Solver sampling (default temperature 0.7, 128 tokens); generator: temperature 0.7, 1024 tokens. */
  solverSampling?: { temperature?: number; max_tokens?: number };
  generatorSampling?: { temperature?: number; max_tokens?: number };
  signal?: AbortSignal;
  onProgress?: (progress: SynthesisProgress) => void;
  /** Called with each candidate once decided (awaited in order of decision). */
  onCandidate?: (task: SynthesizedTask) => void | Promise<void>;
}

/** The generator's prompt for one chunk. */
export function generatorPrompt(chunk: Chunk, count: number): string {
  return `You write quiz questions grounded in a passage.

Passage (from ${chunk.source}):
<<<
${chunk.text}
>>>

Write ${count} questions that can be answered from this passage alone. Each answer is short (a few words), copied from the passage where possible. Reply with JSON only, like:
[{"question": "...", "answer": "..."}]`;
}

/** Marks the passage in an open-book prompt (so offline solvers can find it). */
export const PASSAGE_OPEN = 'Passage:\n<<<\n';
const PASSAGE_CLOSE = '\n>>>';

/** The solver's prompt: with the passage (open book) or without it (closed book). */
export function solverPrompt(question: string, passage?: string): string {
  const context = passage === undefined ? '' : `${PASSAGE_OPEN}${passage}${PASSAGE_CLOSE}\n\n`;
  return `Answer the question${passage === undefined ? '' : ' using the passage'}.\n\n${context}Question: ${question}\n\nReply with the answer alone, in a few words.`;
}

/**
 * The judge's instructions for comparing an answer with the reference, as a template with {question},
 * {answer} and {response}: synthesis fills it in (`answerMatchPrompt`) and the environment files it
 * writes give it to their `JudgeRubric`, so a judge that passes synthesis is read the same way in
 * evaluation (a short reason, then "Verdict: yes|no", which `parseJudgeScore` reads).
 */
export const ANSWER_MATCH_JUDGE_PROMPT = `Does the response give the same answer as the reference?

Question: {question}
Reference answer: {answer}
Response: {response}

Write one short sentence of reasoning, then a last line "Verdict: yes" or "Verdict: no".`;

/** Tokens the answer-matching judge may write: enough for its sentence of reasoning and the verdict. */
export const ANSWER_MATCH_JUDGE_MAX_TOKENS = 256;

/** The judge's prompt for comparing an answer with the reference (`ANSWER_MATCH_JUDGE_PROMPT` filled in). */
export function answerMatchPrompt(question: string, reference: string, response: string): string {
  return fillTemplate(ANSWER_MATCH_JUDGE_PROMPT, { question, answer: reference, response });
}

/** Thrown inside the run to stop it: a fatal client error or a judge failure. */
class StopRun extends Error {}

/** Runs the whole synthesis; see the module comment. Throws only for unusable input (no documents, an empty one, a bad option). */
export async function synthesizeTasks(options: SynthesisOptions): Promise<SynthesisResult> {
  const started = Date.now();
  const k = options.k ?? 3;
  if (!Number.isInteger(k) || k < 1) throw new Error(`synthesizeTasks: k must be a positive integer, got ${k}`);
  const perChunk = options.questionsPerChunk ?? 3;
  const minOpen = options.minOpenBookPassRate ?? 0.5;
  const maxClosed = options.maxClosedBookPassRate ?? 1;
  const concurrency = Math.max(1, options.concurrency ?? 8);
  const chunks = chunkDocuments(options.documents, options.chunking);
  const solverSampling = { temperature: 0.7, max_tokens: 128, ...options.solverSampling };
  const generatorSampling = { temperature: 0.7, max_tokens: 1024, ...options.generatorSampling };

  const tasks: SynthesizedTask[] = [];
  const calls = { generator: 0, solver: 0, judge: 0 };
  const seenQuestions = new Set<string>();
  let nextId = 0;
  let chunksGenerated = 0;
  let stoppedEarly: string | undefined;
  let decideChain = Promise.resolve();
  const pending = new Map<number, SynthesizedTask>();

  const stop = new AbortController();
  const onOuterAbort = () => stop.abort();
  options.signal?.addEventListener('abort', onOuterAbort, { once: true });

  const progress = () => options.onProgress?.({ chunks: chunks.length, chunksGenerated, candidates: nextId, decided: tasks.length, kept: tasks.filter((task) => task.kept).length });
  const decide = async (task: SynthesizedTask) => {
    pending.delete(task.id);
    tasks.push(task);
    progress();
    decideChain = decideChain.then(() => options.onCandidate?.(task));
    await decideChain;
  };
  const newTask = (chunk: Chunk, question: string, answer: string): SynthesizedTask => ({
    id: nextId++,
    question,
    answer,
    source: { document: chunk.source, start: chunk.start, end: chunk.end, chunk: chunk.id },
    openBookPassRate: null,
    closedBookPassRate: null,
    kept: false,
  });
  const reject = (task: SynthesizedTask, rejection: RejectionCode, reason: string): SynthesizedTask => ({ ...task, kept: false, rejection, reason });
  /** Records a failed call; a fatal client error or any judge failure stops the run. Returns the reason. */
  const failure = (role: string, error: unknown): string => {
    const message = `${role} failed: ${errorMessage(error)}`;
    const fatal = error instanceof JudgeError || (error instanceof ChatClientError && error.fatal);
    if (fatal && !stop.signal.aborted) {
      stoppedEarly ??= message;
      stop.abort();
    }
    return message;
  };

  const call = async (client: ChatClient, role: 'generator' | 'solver', model: string | undefined, prompt: string, sampling: { temperature?: number; max_tokens?: number }): Promise<string> => {
    if (stop.signal.aborted) throw new StopRun('stopped');
    calls[role] += 1;
    const reply = await client.chat.completions.create({ model: model ?? 'default', messages: [{ role: 'user', content: prompt }], ...sampling, signal: stop.signal });
    return reply.choices[0]?.message.content ?? '';
  };

  const matches = async (task: SynthesizedTask, reply: string): Promise<boolean> => {
    if (!options.judge) return answersMatch(reply, task.answer);
    if (stop.signal.aborted) throw new StopRun('stopped');
    calls.judge += 1;
    return parseYesNo(
      await askJudge({ client: options.judge, model: options.judgeModel, maxTokens: ANSWER_MATCH_JUDGE_MAX_TOKENS, signal: stop.signal }, answerMatchPrompt(task.question, task.answer, reply)),
    );
  };

  /**
   * A candidate's verification as queued jobs, one per solver attempt (with its comparison), so the
   * attempts of many candidates share the concurrency slots: k open-book jobs; when the last is done,
   * k closed-book jobs at the front of the queue (a started candidate finishes first); then the verdict.
   */
  const verify = (chunk: Chunk, task: SynthesizedTask): (() => Promise<void>)[] => {
    let current = task;
    let finished = false;
    const finish = async (result: SynthesizedTask) => {
      if (finished) return;
      finished = true;
      await decide(result);
    };
    const phase = (passage: string | undefined, onDone: (answers: string[], rate: number) => Promise<void>) => {
      const answers = new Array<string>(k).fill('');
      let passed = 0;
      let done = 0;
      return Array.from({ length: k }, (_, i) => async () => {
        if (finished) return;
        try {
          const reply = await call(options.solver, 'solver', options.solverModel, solverPrompt(current.question, passage), solverSampling);
          const matched = await matches(current, reply);
          if (finished) return;
          answers[i] = reply;
          if (matched) passed += 1;
          done += 1;
          if (done === k) await onDone(answers, passed / k);
        } catch (error) {
          // A stopped run reports the candidates it did not finish as cancelled, at the end.
          if (error instanceof StopRun || stop.signal.aborted) return;
          await finish(reject(current, 'error', failure(error instanceof JudgeError ? 'the judge' : 'the solver', error)));
        }
      });
    };
    const closedBook = () =>
      phase(undefined, async (answers, rate) => {
        current = { ...current, closedBookPassRate: rate, closedBookAnswers: answers };
        if (rate > maxClosed)
          return finish(reject(current, 'answerable-closed-book', `the solver answers it without the document in ${fraction(rate, k)} attempts (allowed at most ${percent(maxClosed)})`));
        await finish({ ...current, kept: true });
      });
    return phase(chunk.text, async (answers, rate) => {
      current = { ...current, openBookPassRate: rate, openBookAnswers: answers };
      pending.set(current.id, current);
      if (rate < minOpen) return finish(reject(current, 'unanswerable', `the solver matched the reference in ${fraction(rate, k)} open-book attempts (needs at least ${percent(minOpen)})`));
      verifyQueue.unshift(...closedBook());
    });
  };

  // Verification jobs go before generation jobs, so candidates finish (and are written) early.
  const verifyQueue: (() => Promise<void>)[] = [];
  const generateQueue: (() => Promise<void>)[] = [];
  const generate = (chunk: Chunk) => async () => {
    let reply: string;
    try {
      reply = await call(options.generator, 'generator', options.generatorModel, generatorPrompt(chunk, perChunk), generatorSampling);
    } catch (error) {
      if (error instanceof StopRun || stop.signal.aborted) return;
      chunksGenerated += 1;
      return await decide(reject(newTask(chunk, '', ''), 'error', failure('the generator', error)));
    }
    chunksGenerated += 1;
    const parsed = parseCandidateList(reply);
    if (!parsed.ok) return await decide({ ...reject(newTask(chunk, '', ''), 'malformed', parsed.reason), raw: reply.slice(0, 2000) });
    const items = [...parsed.pairs.map((pair) => ({ pair })), ...parsed.malformed.map((item) => ({ item }))];
    for (const entry of items) {
      if ('item' in entry) {
        await decide({ ...reject(newTask(chunk, entry.item.question ?? '', ''), 'malformed', `item ${entry.item.index}: ${entry.item.reason}`), raw: entry.item.raw });
        continue;
      }
      const task = newTask(chunk, entry.pair.question, entry.pair.answer);
      const key = normalizeAnswer(task.question);
      if (seenQuestions.has(key)) {
        await decide(reject(task, 'duplicate', 'the same question was proposed before'));
        continue;
      }
      seenQuestions.add(key);
      pending.set(task.id, task);
      verifyQueue.push(...verify(chunk, task));
    }
    progress();
  };
  generateQueue.push(...chunks.map(generate));
  const queued = () => verifyQueue.length + generateQueue.length;

  try {
    await new Promise<void>((resolve) => {
      let active = 0;
      const pump = () => {
        while (active < concurrency && queued() > 0 && !stop.signal.aborted) {
          const job = (verifyQueue.shift() ?? generateQueue.shift())!;
          active += 1;
          void job()
            .catch(() => undefined)
            .finally(() => {
              active -= 1;
              pump();
            });
        }
        if (active === 0 && (queued() === 0 || stop.signal.aborted)) resolve();
      };
      pump();
    });
  } finally {
    options.signal?.removeEventListener('abort', onOuterAbort);
  }
  if (!stoppedEarly && options.signal?.aborted) stoppedEarly = 'cancelled';
  for (const task of [...pending.values()]) await decide(reject(task, 'cancelled', `not verified: the run stopped (${stoppedEarly ?? 'cancelled'})`));
  await decideChain;

  tasks.sort((a, b) => a.id - b.id);
  return { tasks, report: buildReport(options.documents.length, chunks.length, chunksGenerated, tasks, calls, k, Date.now() - started, stoppedEarly) };
}

function buildReport(
  documents: number,
  chunks: number,
  chunksGenerated: number,
  tasks: SynthesizedTask[],
  calls: SynthesisReport['calls'],
  k: number,
  wallMs: number,
  stoppedEarly: string | undefined,
): SynthesisReport {
  const kept = tasks.filter((task) => task.kept);
  const rejections: Record<RejectionCode, number> = { malformed: 0, duplicate: 0, unanswerable: 0, 'answerable-closed-book': 0, error: 0, cancelled: 0 };
  for (const task of tasks) if (task.rejection) rejections[task.rejection] += 1;
  const mean = (values: number[]) => (values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length);
  const open = mean(kept.map((task) => task.openBookPassRate ?? 0));
  const closed = mean(kept.map((task) => task.closedBookPassRate ?? 0));
  return {
    documents,
    chunks,
    chunksGenerated,
    candidates: tasks.length,
    kept: kept.length,
    rejected: tasks.length - kept.length,
    rejections,
    calls,
    k,
    meanOpenBookPassRate: open,
    meanClosedBookPassRate: closed,
    groundingGap: open === null || closed === null ? null : open - closed,
    wallMs,
    candidatesPerMinute: wallMs > 0 ? (tasks.length / wallMs) * 60_000 : 0,
    ...(stoppedEarly ? { stoppedEarly } : {}),
  };
}

function percent(rate: number): string {
  return `${Math.round(rate * 100)}%`;
}

function fraction(rate: number, k: number): string {
  return `${Math.round(rate * k)}/${k}`;
}
