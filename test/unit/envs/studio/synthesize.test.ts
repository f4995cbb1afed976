import { afterEach, describe, expect, test } from 'vitest';
import { ScriptedClient, type Message } from '../../../../src/envs/index.ts';
import { PASSAGE_OPEN, synthesizeTasks, type SynthesizedTask } from '../../../../src/envs/studio/index.ts';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../../../support/fake-openai-server.ts';

// Three chunks: two Markdown sections and one plain-text document.
const DOCUMENTS = [
  { name: 'guide.md', text: '# Tea\n\nGreen tea steeps for 2 minutes at 80 degrees.\n\n# Coffee\n\nEspresso uses 9 bar of pressure.' },
  { name: 'notes.txt', text: 'The office opens at 8 and closes at 18.' },
];

const pair = (n: number) => ({ question: `Question ${n}?`, answer: `Answer ${n}` });
/** The generator's reply per chunk: 4 pairs + 1 item without an answer; 4 pairs in an object; not JSON. */
function generatorPolicy(messages: Message[]): string {
  const prompt = messages.at(-1)!.content;
  if (prompt.includes('Green tea')) return `Here are the questions:\n\`\`\`json\n${JSON.stringify([pair(1), pair(2), pair(3), pair(4), { question: 'Missing answer?' }])}\n\`\`\``;
  if (prompt.includes('Espresso')) return JSON.stringify({ questions: [pair(5), pair(6), pair(7), pair(8)] });
  return 'Sorry, I cannot write questions about office hours.';
}

/** Questions 2, 5 and 7 cannot be answered (the solver misses them even with the passage); question 1 is answered closed-book too. */
const UNANSWERABLE = new Set([2, 5, 7]);
function solverPolicy(messages: Message[]): string {
  const prompt = messages.at(-1)!.content;
  const n = Number(/Question (\d+)\?/.exec(prompt)![1]);
  if (!prompt.includes(PASSAGE_OPEN)) return n === 1 ? 'Answer 1' : 'I do not know';
  return UNANSWERABLE.has(n) ? 'The passage does not say.' : `answer ${n}.`;
}

describe('synthesizeTasks', () => {
  let server: FakeOpenAIServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  test('10 candidates, 3 unanswerable and 2 malformed → 5 kept, 5 rejected with the right reasons', async () => {
    const generator = new ScriptedClient(generatorPolicy);
    const solver = new ScriptedClient(solverPolicy);
    const decided: SynthesizedTask[] = [];
    const { tasks, report } = await synthesizeTasks({ documents: DOCUMENTS, generator, solver, k: 3, concurrency: 4, onCandidate: (task) => { decided.push(task); } });

    expect(tasks).toHaveLength(10);
    expect(decided).toHaveLength(10);
    expect(tasks.filter((task) => task.kept).map((task) => task.question)).toEqual(['Question 1?', 'Question 3?', 'Question 4?', 'Question 6?', 'Question 8?']);
    const rejected = tasks.filter((task) => !task.kept);
    expect(rejected.map((task) => task.rejection).sort()).toEqual(['malformed', 'malformed', 'unanswerable', 'unanswerable', 'unanswerable']);
    expect(rejected.filter((task) => task.rejection === 'unanswerable').map((task) => task.question)).toEqual(['Question 2?', 'Question 5?', 'Question 7?']);
    const malformed = rejected.filter((task) => task.rejection === 'malformed');
    expect(malformed.map((task) => task.reason)).toEqual(['item 4: the item has no "answer" text', expect.stringContaining('the reply is not JSON')]);
    expect(malformed[1]!.source).toMatchObject({ document: 'notes.txt', start: 0, end: DOCUMENTS[1]!.text.length });

    const q1 = tasks.find((task) => task.question === 'Question 1?')!;
    expect(q1).toMatchObject({ openBookPassRate: 1, closedBookPassRate: 1, kept: true, source: { document: 'guide.md', start: 0 } });
    expect(tasks.find((task) => task.question === 'Question 3?')).toMatchObject({ openBookPassRate: 1, closedBookPassRate: 0 });
    expect(tasks.find((task) => task.question === 'Question 2?')).toMatchObject({ openBookPassRate: 0, closedBookPassRate: null });

    expect(report).toMatchObject({ documents: 2, chunks: 3, chunksGenerated: 3, candidates: 10, kept: 5, rejected: 5, k: 3, calls: { generator: 3, solver: 8 * 3 + 5 * 3, judge: 0 } });
    expect(report.rejections).toEqual({ malformed: 2, duplicate: 0, unanswerable: 3, 'answerable-closed-book': 0, error: 0, cancelled: 0 });
    expect(report.meanOpenBookPassRate).toBe(1);
    expect(report.meanClosedBookPassRate).toBeCloseTo(0.2);
    expect(report.groundingGap).toBeCloseTo(0.8);
    // Open-book prompts carry the chunk; closed-book prompts do not.
    const prompts = solver.requests.map((request) => request.messages.at(-1)!.content);
    expect(prompts.filter((prompt) => prompt.includes('Green tea steeps'))).toHaveLength(4 * 3);
    expect(prompts.filter((prompt) => !prompt.includes(PASSAGE_OPEN))).toHaveLength(5 * 3);
  });

  test('maxClosedBookPassRate rejects what the solver knows without the document; duplicates are rejected unverified', async () => {
    const generator = new ScriptedClient((messages) => (messages.at(-1)!.content.includes('Green tea') ? JSON.stringify([pair(1), pair(3), { question: 'question 1', answer: 'x' }]) : '[]'));
    const { tasks, report } = await synthesizeTasks({ documents: DOCUMENTS, generator, solver: new ScriptedClient(solverPolicy), k: 2, maxClosedBookPassRate: 0.5 });
    expect(tasks.map((task) => [task.question, task.kept, task.rejection ?? null])).toEqual([
      ['Question 1?', false, 'answerable-closed-book'],
      ['Question 3?', true, null],
      ['question 1', false, 'duplicate'],
    ]);
    expect(report.calls.solver).toBe(2 * 2 + 2 * 2);
  });

  test('against the fake server: the judge compares answers; a judge without a verdict stops the run and loses nothing', async () => {
    let judgeCalls = 0;
    server = await startFakeOpenAIServer((messages, request) => {
      const prompt = messages.at(-1)!.content;
      if (request.model === 'gen') return JSON.stringify([pair(1), pair(3), pair(4)]);
      if (request.model === 'solver') return solverPolicy(messages);
      judgeCalls += 1;
      if (judgeCalls > 4) return 'Hmm, hard to say.';
      return /Response: answer (\d)/i.test(prompt) ? 'They name the same thing.\nVerdict: yes' : 'Different.\nVerdict: no';
    });
    const { OpenAIHttpClient } = await import('../../../../src/envs/index.ts');
    const client = new OpenAIHttpClient({ baseURL: server.baseURL, maxRetries: 0 });
    const result = await synthesizeTasks({ documents: [DOCUMENTS[1]!], generator: client, solver: client, judge: client, generatorModel: 'gen', solverModel: 'solver', judgeModel: 'judge', k: 2, concurrency: 1 });
    expect(result.report.stoppedEarly).toMatch(/the judge failed: .*no yes\/no verdict/);
    expect(result.tasks).toHaveLength(3);
    expect(result.tasks.map((task) => task.rejection ?? 'kept')).toEqual(['kept', 'error', 'cancelled']);
    expect(result.tasks[0]).toMatchObject({ openBookPassRate: 1, closedBookPassRate: 1 });
    expect(result.tasks[1]!.reason).toContain('no yes/no verdict');
    expect(result.report.calls.judge).toBe(5);
  });

  test('an unreachable generator stops the run with a clear reason', async () => {
    const { OpenAIHttpClient } = await import('../../../../src/envs/index.ts');
    server = await startFakeOpenAIServer(() => 'unused');
    const url = server.baseURL;
    await server.close();
    server = undefined;
    const client = new OpenAIHttpClient({ baseURL: url, maxRetries: 0 });
    const result = await synthesizeTasks({ documents: DOCUMENTS, generator: client, solver: client, concurrency: 1 });
    expect(result.report.stoppedEarly).toMatch(/^the generator failed: /);
    expect(result.tasks).toHaveLength(1);
    expect(result.tasks[0]).toMatchObject({ rejection: 'error', kept: false });
  });

  test('empty documents are refused before any call', async () => {
    const generator = new ScriptedClient(['[]']);
    await expect(synthesizeTasks({ documents: [{ name: 'empty.md', text: '\n' }], generator, solver: generator })).rejects.toThrow('document "empty.md" is empty');
    expect(generator.requests).toHaveLength(0);
  });

  test('cancelling keeps every decided candidate and reports the rest as cancelled', async () => {
    const stop = new AbortController();
    const generator = new ScriptedClient(generatorPolicy);
    const solver = new ScriptedClient((messages) => {
      if (solver.requests.length >= 6) stop.abort();
      return solverPolicy(messages);
    });
    const { tasks, report } = await synthesizeTasks({ documents: DOCUMENTS, generator, solver, k: 3, concurrency: 1, signal: stop.signal });
    expect(report.stoppedEarly).toBe('cancelled');
    expect(tasks.filter((task) => task.rejection === 'cancelled').length).toBeGreaterThan(0);
    expect(tasks.every((task) => task.kept || task.reason)).toBe(true);
  });
});
