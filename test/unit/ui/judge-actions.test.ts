/**
 * The Judge card's actions: the heuristic lends nothing (environments keep their own stand-in), an
 * endpoint judge calls its own URL with its own key and model (not the policy's), the choice is
 * remembered across a reload while the key is kept apart, and a damaged entry keeps the defaults.
 */
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';

const storage = new Map<string, string>();
const localStorageShim = {
  getItem: (key: string) => storage.get(key) ?? null,
  setItem: (key: string, value: string) => void storage.set(key, value),
  removeItem: (key: string) => void storage.delete(key),
};
vi.stubGlobal('localStorage', localStorageShim);
vi.mock('../../../src/workers/engine-bridge.ts', () => ({ createEngineChatClient: () => ({ chat: { completions: { create: async () => { throw new Error('not here'); } } } }) }));
vi.mock('../../../src/ui/features/models/webllm-actions.ts', () => ({ webllmClient: async () => ({ chat: { completions: { create: async () => { throw new Error('not here'); } } } }) }));

const { buildJudge, chooseJudge, judgeLabel, restoreJudge, setJudgeApiKey, setJudgeEndpoint } = await import('../../../src/ui/features/judge/judge-actions.ts');
const { usePlayground } = await import('../../../src/ui/store/index.ts');

const fetchMock = vi.fn(async (_url: string, _init: RequestInit) => new Response(JSON.stringify({ id: 'j', model: 'judge-m', choices: [{ index: 0, message: { role: 'assistant', content: 'Score: 8' }, finish_reason: 'stop' }] }), { status: 200, headers: { 'content-type': 'application/json' } }));

beforeEach(() => {
  storage.clear();
  storage.set('tabrl.endpoint.apiKey', 'sk-policy');
  usePlayground.setState({ judge: { kind: 'heuristic', baseURL: 'http://localhost:8000/v1', model: 'default', hasApiKey: false } });
  vi.stubGlobal('fetch', fetchMock);
  fetchMock.mockClear();
});

afterEach(() => {
  vi.unstubAllGlobals();
  vi.stubGlobal('localStorage', localStorageShim);
});

describe('judge actions', () => {
  test('the offline heuristic lends no judge', async () => {
    expect(await buildJudge()).toBeUndefined();
    expect(judgeLabel()).toBe('the offline heuristic judge');
  });

  test('an endpoint judge calls its own URL with its own key and model', async () => {
    chooseJudge('endpoint');
    setJudgeEndpoint({ baseURL: 'http://judge.test/v1', model: 'judge-m' });
    setJudgeApiKey('sk-judge');
    const judge = await buildJudge();
    expect(judge).toMatchObject({ model: 'judge-m', label: 'endpoint judge-m at http://judge.test/v1' });
    const reply = await judge!.client.chat.completions.create({ model: judge!.model, messages: [{ role: 'user', content: 'grade' }] });
    expect(reply.choices[0]!.message.content).toBe('Score: 8');
    const [url, init] = fetchMock.mock.calls[0]!;
    expect(url).toBe('http://judge.test/v1/chat/completions');
    expect(new Headers(init.headers).get('authorization')).toBe('Bearer sk-judge');
    expect(JSON.parse(String(init.body)).model).toBe('judge-m');
  });

  test('the choice survives a reload, the key stays out of the remembered settings, a damaged entry keeps the defaults', () => {
    chooseJudge('endpoint');
    setJudgeEndpoint({ baseURL: 'http://judge.test/v1', model: 'judge-m' });
    setJudgeApiKey('sk-judge');
    expect(storage.get('tabrl.judge')).not.toContain('sk-judge');
    usePlayground.setState({ judge: { kind: 'heuristic', baseURL: 'x', model: 'y', hasApiKey: false } });
    restoreJudge();
    expect(usePlayground.getState().judge).toMatchObject({ kind: 'endpoint', baseURL: 'http://judge.test/v1', model: 'judge-m', hasApiKey: true });
    storage.set('tabrl.judge', '{broken');
    usePlayground.setState((state) => ({ judge: { ...state.judge, kind: 'heuristic', baseURL: 'http://localhost:8000/v1', model: 'default' } }));
    restoreJudge();
    expect(usePlayground.getState().judge).toMatchObject({ kind: 'heuristic', baseURL: 'http://localhost:8000/v1', model: 'default' });
  });
});
