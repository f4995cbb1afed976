import { describe, expect, test } from 'vitest';
import { evaluate, OpenAIHttpClient, Parser, Rubric, ScriptedClient, SingleTurnEnv } from '../../../../src/envs/index.ts';
import { chunkDocuments, createHeuristicStudioClients, CriteriaRubric, criteriaRubricSnippet, JudgeError, proposeCriteria, synthesizeTasks, tasksFromTraces } from '../../../../src/envs/studio/index.ts';
import { startFakeOpenAIServer } from '../../../support/fake-openai-server.ts';

const CRITERIA = [
  { name: 'cites', question: 'Does the answer cite the document?', weight: 2 },
  { name: 'short', question: 'Is the answer under 20 words?', weight: 1 },
  { name: 'polite', question: 'Is the answer polite?', weight: 0 },
];
const envWith = (judgeClient: ConstructorParameters<typeof CriteriaRubric>[0]['judgeClient']) =>
  new SingleTurnEnv({ dataset: [{ question: 'When does the office open?', answer: '8' }], rubric: new CriteriaRubric({ judgeClient, judgeModel: 'judge-1', criteria: CRITERIA }) });

describe('CriteriaRubric', () => {
  test('one judge call per rollout; each criterion is its own metric, weighted into the reward, with its reason kept', async () => {
    const judge = new ScriptedClient(['1. Reason: it quotes the notes. Verdict: yes\n2. Reason: six words. Verdict: yes\n3. Reason: curt. Verdict: no']);
    const env = envWith(judge);
    const trajectory = await env.rollout(new ScriptedClient(['At 8, says notes.txt.']), env.dataset[0]!);
    expect(trajectory.scores).toEqual({ criterion_cites: 1, criterion_short: 1, criterion_polite: 0 });
    expect(trajectory.reward).toBe(3);
    expect(judge.requests).toHaveLength(1);
    const prompt = judge.requests[0]!.messages[0]!.content;
    expect(prompt).toContain('1. Does the answer cite the document?\n2. Is the answer under 20 words?\n3. Is the answer polite?');
    expect(prompt).toContain('Reference answer:\n8');
    expect(trajectory.state.criteriaVerdicts).toEqual([
      { name: 'cites', reason: 'it quotes the notes.', verdict: true },
      { name: 'short', reason: 'six words.', verdict: true },
      { name: 'polite', reason: 'curt.', verdict: false },
    ]);
  });

  test('a missing verdict is a recorded error on every criterion (not a silent 0 without a trace)', async () => {
    const env = envWith(new ScriptedClient(['1. Reason: fine. Verdict: yes']));
    const trajectory = await env.rollout(new ScriptedClient(['At 8.']), env.dataset[0]!);
    expect(trajectory.errors).toHaveLength(3);
    expect(trajectory.errors[0]).toMatchObject({ source: 'reward', name: 'criterion_cites', kind: 'no-verdict' });
    expect(trajectory.errors[0]!.message).toContain('no verdict for criterion 2');
  });

  test('an unreachable judge and a judge answering 4xx are fatal: the evaluation stops and says why', async () => {
    const server = await startFakeOpenAIServer(() => ({ status: 400, body: { error: { message: 'unknown model judge-1' } } }));
    try {
      const result = await evaluate(envWith(new OpenAIHttpClient({ baseURL: server.baseURL, maxRetries: 0 })), new ScriptedClient(['At 8.']), { rolloutsPerTask: 4, concurrency: 1 });
      expect(result.stoppedEarly).toMatch(/the judge refused the request \(bad_request\)/);
      expect(result.records).toHaveLength(1);
      expect(result.records[0]!.errors[0]).toMatchObject({ fatal: true, kind: 'rejected' });
    } finally {
      await server.close();
    }
    const closed = await startFakeOpenAIServer(() => 'unused');
    const url = closed.baseURL;
    await closed.close();
    const result = await evaluate(envWith(new OpenAIHttpClient({ baseURL: url, maxRetries: 0 })), new ScriptedClient(['At 8.']), { rolloutsPerTask: 3, concurrency: 1 });
    expect(result.stoppedEarly).toMatch(/the judge is unreachable/);
    expect(result.records).toHaveLength(1);
  });

  test('a group reward whose judge is unreachable marks every rollout of the group with a fatal error', async () => {
    const rubric = new Rubric().addGroupReward(() => { throw new JudgeError('the judge is unreachable (network): refused', 'unreachable'); }, 1, 'pairwiseJudge');
    const ctx = { prompt: [], completion: [], answer: undefined, state: { prompt: [], completion: [], info: {}, turn: 1 }, info: {}, task: undefined, parser: new Parser() };
    const verdicts = await rubric.scoreGroup([ctx, { ...ctx, state: { ...ctx.state } }]);
    expect(verdicts.map((verdict) => verdict.errors[0])).toEqual([0, 1].map(() => ({ source: 'reward', name: 'pairwiseJudge', message: 'pairwiseJudge threw: the judge is unreachable (network): refused; scored 0', fatal: true, kind: 'unreachable' })));
  });

  test('bad criteria are refused', () => {
    expect(() => new CriteriaRubric({ judgeClient: new ScriptedClient(['x']), criteria: [] })).toThrow('at least one criterion');
    expect(() => new CriteriaRubric({ judgeClient: new ScriptedClient(['x']), criteria: [{ name: 'a b', question: 'Q?' }] })).toThrow('letters, digits or _');
  });
});

describe('proposeCriteria', () => {
  test('reads the proposal leniently, makes names unique, and writes a snippet', async () => {
    const judge = new ScriptedClient(['Sure:\n```json\n{"criteria": [{"name": "Uses word", "question": "Does it use the word?"}, {"question": "Does it use the word?"}, "Is it two lines?"]}\n```']);
    const criteria = await proposeCriteria({ judge, examples: [{ question: 'Write a poem', response: 'glow glow', note: 'flagged' }] });
    expect(criteria).toEqual([
      { name: 'uses_word', question: 'Does it use the word?', weight: 1 },
      { name: 'use_word', question: 'Does it use the word?', weight: 1 },
      { name: 'two_lines', question: 'Is it two lines?', weight: 1 },
    ]);
    expect(criteriaRubricSnippet(criteria)).toContain('"name": "two_lines"');
    await expect(proposeCriteria({ judge: new ScriptedClient(['No idea.']), examples: [{ question: 'Q' }] })).rejects.toThrow('proposed no criteria');
  });
});

describe('tasksFromTraces', () => {
  test('OpenAI logs, request/response pairs, TabRL and verifiers results; duplicates merged; malformed lines reported by number', () => {
    const lines = [
      JSON.stringify({ messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Reset my password?' }, { role: 'assistant', content: 'Click "forgot".' }] }),
      'this is not json',
      JSON.stringify({ request: { model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'Cancel my order' }] }] }, response: { choices: [{ message: { role: 'assistant', content: 'Done.' } }] } }),
      '',
      JSON.stringify({ task_index: 0, prompt: [{ role: 'user', content: 'What is 2+2?' }], completion: [{ role: 'assistant', content: '4' }], reward: 1 }),
      JSON.stringify({ prompt: 'Translate "chat"', completion: 'cat', reward: 0.5 }),
      JSON.stringify({ messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Reset my password?' }, { role: 'assistant', content: 'Another answer.' }] }),
      JSON.stringify({ messages: [{ role: 'assistant', content: 'hello?' }] }),
      JSON.stringify({ foo: 1 }),
      JSON.stringify({ messages: [{ role: 'wizard', content: 'x' }] }),
    ];
    const parsed = tasksFromTraces(lines.join('\n'));
    expect(parsed.lines).toBe(9);
    expect(parsed.duplicates).toBe(1);
    expect(parsed.tasks.map((task) => [task.question, task.info.reference, task.info.line])).toEqual([
      ['Reset my password?', 'Click "forgot".', 1],
      ['Cancel my order', 'Done.', 3],
      ['What is 2+2?', '4', 5],
      ['Translate "chat"', 'cat', 6],
    ]);
    expect(parsed.tasks[0]!.prompt).toEqual([{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Reset my password?' }]);
    expect(parsed.tasks[0]!.info.duplicates).toBe(1);
    expect(parsed.skipped.map((entry) => entry.line)).toEqual([2, 8, 9, 10]);
    expect(parsed.skipped[1]!.reason).toBe('the conversation has no user message');
    expect(parsed.skipped[3]!.reason).toContain('messages[0] has no valid role');
    expect(parsed.tasks.length + parsed.duplicates + parsed.skipped.length).toBe(parsed.lines);
  });
});

describe('the offline heuristic clients', () => {
  test('run a whole synthesis: cloze questions answered open-book, not closed-book', async () => {
    const documents = [{ name: 'station.md', text: '# The station\n\nThe research station was founded in 1957 by Margaret Holt.\n\nIts generator burns diesel through the long polar winter.' }];
    const { generator, solver, judge } = createHeuristicStudioClients();
    const exact = await synthesizeTasks({ documents, generator, solver, k: 2 });
    expect(chunkDocuments(documents)).toHaveLength(1);
    expect(exact.tasks.map((task) => [task.answer, task.kept, task.openBookPassRate, task.closedBookPassRate])).toEqual([
      ['1957', true, 1, 0],
      ['generator', true, 1, 0],
    ]);
    const judged = await synthesizeTasks({ documents, generator, solver, judge, k: 2 });
    expect(judged.report).toMatchObject({ kept: 2, groundingGap: 1, calls: { judge: 8 } });
  });
});
