/**
 * The judge relay between the app and the sandbox, in Node over a real comlink MessageChannel: the
 * sandbox's real API (createSandboxApi) runs the judged-writing built-in, the app's real bridge
 * (openSandbox) lends it a judge. The judge's calls come back to the app, its
 * key never crosses, a judge that fails stops the run with a clear error (never a reward of 0), and
 * a slow judge is not mistaken for environment code that hangs.
 */
import * as Comlink from 'comlink';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { ChatClientError, ScriptedClient, type ChatClient, type ChatRequest } from '../../../src/envs/index.ts';
import loadJudgedWriting, { judgedWritingExpertPolicy } from '../../../src/envs/builtin/judged-writing.ts';
import { answerCall, relayedClient } from '../../../src/isolation/relay.ts';
import { createSandboxApi } from '../../../src/workers/sandbox/sandbox-api.ts';

vi.mock('virtual:tabrl-sandbox-runtime', () => ({ default: '/* the runtime is faked in Node */' }));
const { openSandbox, JudgeFailedError } = await import('../../../src/workers/sandbox-bridge.ts');
type SessionRequest = Parameters<typeof openSandbox>[0];

/** One evaluation in a fresh session, disposed of afterwards (as a playground job does). */
async function evaluateInSandbox(request: SessionRequest & { options: Parameters<Awaited<ReturnType<typeof openSandbox>>['evaluate']>[0] }) {
  const session = await openSandbox(request);
  try {
    return await session.evaluate(request.options);
  } finally {
    session.dispose();
  }
}

const SECRET = 'sk-judge-secret-123';
const ports: MessagePort[] = [];

afterEach(() => {
  for (const port of ports.splice(0)) port.close();
});

/** A sandbox frame in this process: the real sandbox API on one end of a channel; every message that reaches it is kept as text. */
function fakeFrame(seen: string[], loadEnvironment: (args: Record<string, unknown>) => unknown) {
  return async () => {
    const channel = new MessageChannel();
    ports.push(channel.port1, channel.port2);
    channel.port2.addEventListener('message', (event: MessageEvent) => seen.push(JSON.stringify(event.data) ?? ''));
    const api = createSandboxApi(() => ({ default: loadEnvironment }));
    Comlink.expose(api, channel.port2 as unknown as Comlink.Endpoint);
    return { port: channel.port1, onError: () => {}, dispose: () => channel.port1.close() };
  };
}

/** A judge with a key in its closure that grades every poem `grade` after `delayMs`, recording the prompts it saw. */
function keyedJudge(reply: (request: ChatRequest) => string, delayMs = 0): ChatClient & { prompts: string[] } {
  const prompts: string[] = [];
  return {
    prompts,
    chat: {
      completions: {
        async create(request) {
          const authorization = `Bearer ${SECRET}`;
          expect(authorization).toContain(SECRET);
          prompts.push(request.messages.at(-1)?.content ?? '');
          if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
          return { id: 'judge', model: request.model, choices: [{ index: 0, message: { role: 'assistant', content: reply(request) }, finish_reason: 'stop' }] };
        },
      },
    },
  };
}

function failingJudge(error: Error): ChatClient {
  return { chat: { completions: { create: async () => { throw error; } } } };
}

const options = { numTasks: 3, rolloutsPerTask: 1, concurrency: 2, samplingArgs: { max_tokens: 64 }, model: 'expert' };

describe('the two halves of a relayed call', () => {
  test('a completion and an error cross as plain data and come back as a completion and a ChatClientError of the same kind and status', async () => {
    const answering = relayedClient((request) => answerCall(new ScriptedClient(['Score: 7']), request, new AbortController().signal));
    const completion = await answering.chat.completions.create({ model: 'j', messages: [{ role: 'user', content: 'grade' }] });
    expect(completion.choices[0]!.message.content).toBe('Score: 7');

    const refusing = relayedClient((request) => answerCall(failingJudge(new ChatClientError('401 Unauthorized: bad key', 'auth', 401)), request, new AbortController().signal));
    const error = await refusing.chat.completions.create({ model: 'j', messages: [] }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ChatClientError);
    expect(error).toMatchObject({ kind: 'auth', status: 401, message: '401 Unauthorized: bad key' });

    const throwing = relayedClient((request) => answerCall(failingJudge(new TypeError('boom')), request, new AbortController().signal));
    await expect(throwing.chat.completions.create({ model: 'j', messages: [] })).rejects.toMatchObject({ kind: 'bad_response', message: 'boom' });
  });

  test("a stop answers a call in flight as 'aborted' at once, even from a client slow to let go of it", async () => {
    let release = () => {};
    const slow: ChatClient = {
      chat: {
        completions: {
          // Like a busy in-tab model: it ignores the signal and answers only when released.
          create: () => new Promise((resolve) => { release = () => resolve({ id: 'late', model: 'm', choices: [] }); }),
        },
      },
    };
    const controller = new AbortController();
    const answer = answerCall(slow, { model: 'm', messages: [] }, controller.signal);
    controller.abort();
    expect(await answer).toEqual({ ok: false, message: 'the request was cancelled', kind: 'aborted' });
    release();
    expect(await answerCall(slow, { model: 'm', messages: [] }, controller.signal)).toMatchObject({ kind: 'aborted' });
  });

  test('a cancelled request never leaves the sandbox', async () => {
    const send = vi.fn();
    const controller = new AbortController();
    controller.abort();
    await expect(relayedClient(send).chat.completions.create({ model: 'j', messages: [], signal: controller.signal })).rejects.toMatchObject({ kind: 'aborted' });
    expect(send).not.toHaveBeenCalled();
  });
});

describe('a judge lent to the sandbox', () => {
  test('judged-writing scores with the lent judge, receives its model name, and the key never reaches the sandbox', async () => {
    const seen: string[] = [];
    let receivedArgs: Record<string, unknown> = {};
    const judge = keyedJudge(() => 'Score: 9');
    const result = await evaluateInSandbox({
      code: 'judged-writing',
      label: 'judged-writing',
      args: { numEvalTasks: 3 },
      client: new ScriptedClient(judgedWritingExpertPolicy),
      judge: { client: judge, model: 'judge-model-x', label: 'endpoint judge-model-x' },
      createFrame: fakeFrame(seen, (args) => {
        receivedArgs = args;
        return loadJudgedWriting(args);
      }),
      options,
    });
    expect(result.summary?.numRollouts).toBe(3);
    // 9/10 from the lent judge, not the heuristic stand-in's 10/10 for the expert's poem.
    expect(result.summary?.reward.mean).toBeCloseTo(0.9, 6);
    expect(judge.prompts).toHaveLength(3);
    expect(judge.prompts[0]).toContain('You are grading a short poem.');
    expect(receivedArgs.judgeModel).toBe('judge-model-x');
    expect(typeof (receivedArgs.judgeClient as ChatClient | undefined)?.chat.completions.create).toBe('function');
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.join('\n')).not.toContain(SECRET);
  });

  test('without a lent judge the environment keeps its own offline judge and gets no judgeModel', async () => {
    let receivedArgs: Record<string, unknown> = {};
    const result = await evaluateInSandbox({
      code: 'judged-writing',
      label: 'judged-writing',
      args: { numEvalTasks: 2 },
      client: new ScriptedClient(judgedWritingExpertPolicy),
      createFrame: fakeFrame([], (args) => {
        receivedArgs = args;
        return loadJudgedWriting(args);
      }),
      options,
    });
    expect(receivedArgs).toEqual({ numEvalTasks: 2 });
    expect(result.summary?.passRate).toBe(1);
  });

  test.each([
    ['unreachable', new ChatClientError('cannot reach http://127.0.0.1:9/v1 (connection refused)', 'network'), /connection refused/],
    ['a 4xx answer', new ChatClientError('401 Unauthorized: invalid API key', 'auth', 401), /401 Unauthorized/],
  ])('a judge that is %s stops the run with a JudgeFailedError naming the judge and the reason', async (_what, failure, reason) => {
    const error = await evaluateInSandbox({
      code: 'judged-writing',
      label: 'judged-writing',
      args: { numEvalTasks: 3 },
      client: new ScriptedClient(judgedWritingExpertPolicy),
      judge: { client: failingJudge(failure), model: 'm', label: 'endpoint m at http://127.0.0.1:9/v1' },
      createFrame: fakeFrame([], (args) => loadJudgedWriting(args)),
      options,
    }).then(() => undefined, (caught: unknown) => caught);
    expect(error).toBeInstanceOf(JudgeFailedError);
    expect((error as Error).message).toMatch(reason);
    expect((error as Error).message).toContain('The judge (endpoint m at http://127.0.0.1:9/v1) failed');
    expect((error as Error).message).toContain('The run stopped');
  });

  test('a judge slower than the time limit is waited for: its calls are not environment code', async () => {
    const judge = keyedJudge(() => 'Score: 8', 250);
    const result = await evaluateInSandbox({
      code: 'judged-writing',
      label: 'judged-writing',
      args: { numEvalTasks: 2 },
      client: new ScriptedClient(judgedWritingExpertPolicy),
      judge: { client: judge, model: 'slow', label: 'slow judge' },
      timeLimitMs: 100,
      createFrame: fakeFrame([], (args) => loadJudgedWriting(args)),
      options: { ...options, numTasks: 2, concurrency: 1 },
    });
    expect(result.summary?.numRollouts).toBe(2);
    expect(result.summary?.reward.mean).toBeCloseTo(0.8, 6);
  });
});
