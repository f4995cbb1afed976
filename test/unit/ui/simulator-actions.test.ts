/**
 * The tab's tool simulator choice (Studio → Simulated tools), lent to every run as
 * `args.simulatorClient`: the heuristic lends nothing (files keep their scripted simulator), an
 * endpoint calls its own URL with its own key and model, the Judge card's and the Policy card's
 * models are lent when there is one and refused with what to pick when there is none, and the
 * choice is remembered across a reload while the key is kept apart.
 */
import { beforeEach, describe, expect, test, vi } from 'vitest';

const storage = new Map<string, string>();
vi.stubGlobal('localStorage', {
  getItem: (key: string) => storage.get(key) ?? null,
  setItem: (key: string, value: string) => void storage.set(key, value),
  removeItem: (key: string) => void storage.delete(key),
});
vi.mock('../../../src/workers/engine-bridge.ts', () => ({ createEngineChatClient: () => ({ chat: { completions: { create: async () => { throw new Error('not here'); } } } }) }));
vi.mock('../../../src/ui/features/models/webllm-actions.ts', () => ({ webllmClient: async () => ({ chat: { completions: { create: async () => { throw new Error('not here'); } } } }) }));

const { buildSimulator, chooseSimulator, restoreSimulator, setSimulatorApiKey, setSimulatorEndpoint, simulatorLabel } = await import('../../../src/ui/features/judge/simulator-actions.ts');
const { chooseJudge, setJudgeEndpoint } = await import('../../../src/ui/features/judge/judge-actions.ts');
const { usePlayground } = await import('../../../src/ui/store/index.ts');

const fetchMock = vi.fn(async (_url: string, _init: RequestInit) => new Response(JSON.stringify({ id: 's', model: 'sim-m', choices: [{ index: 0, message: { role: 'assistant', content: '{"status":"lost"}' }, finish_reason: 'stop' }] }), { status: 200, headers: { 'content-type': 'application/json' } }));

beforeEach(() => {
  storage.clear();
  storage.set('tabrl.endpoint.apiKey', 'sk-policy');
  storage.set('tabrl.judge.apiKey', 'sk-judge');
  usePlayground.setState({
    simulator: { kind: 'heuristic', baseURL: 'http://localhost:8000/v1', model: 'default', hasApiKey: false },
    judge: { kind: 'heuristic', baseURL: 'http://localhost:8000/v1', model: 'default', hasApiKey: false },
    policy: 'expert',
  });
  vi.stubGlobal('fetch', fetchMock);
  fetchMock.mockClear();
});

describe('the tool simulator choice', () => {
  test('the offline heuristic lends no simulator', async () => {
    expect(await buildSimulator()).toBeUndefined();
    expect(simulatorLabel()).toBe('the scripted simulator (offline, nearest recorded call)');
  });

  test('an endpoint simulator calls its own URL with its own key and model, not the policy\'s or the judge\'s', async () => {
    chooseSimulator('endpoint');
    setSimulatorEndpoint({ baseURL: 'http://sim.test/v1', model: 'sim-m' });
    setSimulatorApiKey('sk-sim');
    const simulator = await buildSimulator();
    expect(simulator).toMatchObject({ model: 'sim-m', label: 'endpoint sim-m at http://sim.test/v1' });
    const reply = await simulator!.client.chat.completions.create({ model: simulator!.model, messages: [{ role: 'user', content: 'simulate' }] });
    expect(reply.choices[0]!.message.content).toBe('{"status":"lost"}');
    const [url, init] = fetchMock.mock.calls[0]!;
    expect(url).toBe('http://sim.test/v1/chat/completions');
    expect(new Headers(init.headers).get('authorization')).toBe('Bearer sk-sim');
    expect(JSON.parse(String(init.body)).model).toBe('sim-m');
  });

  test("the Judge card's model and the Policy card's model are lent when there is one; otherwise the message says what to pick", async () => {
    chooseSimulator('judge');
    await expect(buildSimulator()).rejects.toThrow(/the judge is the offline heuristic: pick a judge model in the Judge card/);
    chooseJudge('endpoint');
    setJudgeEndpoint({ baseURL: 'http://judge.test/v1', model: 'judge-m' });
    expect(await buildSimulator()).toMatchObject({ model: 'judge-m', label: 'the judge: endpoint judge-m at http://judge.test/v1' });

    chooseSimulator('policy');
    await expect(buildSimulator()).rejects.toThrow(/the policy is the scripted expert, which cannot simulate a tool/);
    usePlayground.setState({ policy: 'endpoint', baseURL: 'http://policy.test/v1', model: 'policy-m' });
    const simulator = await buildSimulator();
    expect(simulator).toMatchObject({ model: 'policy-m', label: 'the policy: endpoint policy-m at http://policy.test/v1' });
    await simulator!.client.chat.completions.create({ model: simulator!.model, messages: [{ role: 'user', content: 'simulate' }] });
    expect(new Headers(fetchMock.mock.calls[0]![1].headers).get('authorization')).toBe('Bearer sk-policy');
  });

  test('the choice survives a reload, the key stays out of the remembered settings, a damaged entry keeps the defaults', () => {
    chooseSimulator('endpoint');
    setSimulatorEndpoint({ baseURL: 'http://sim.test/v1', model: 'sim-m' });
    setSimulatorApiKey('sk-sim');
    expect(storage.get('tabrl.simulator')).not.toContain('sk-sim');
    usePlayground.setState({ simulator: { kind: 'heuristic', baseURL: 'x', model: 'y', hasApiKey: false } });
    restoreSimulator();
    expect(usePlayground.getState().simulator).toEqual({ kind: 'endpoint', baseURL: 'http://sim.test/v1', model: 'sim-m', hasApiKey: true });
    storage.set('tabrl.simulator', '{broken');
    usePlayground.setState({ simulator: { kind: 'heuristic', baseURL: 'http://localhost:8000/v1', model: 'default', hasApiKey: false } });
    restoreSimulator();
    expect(usePlayground.getState().simulator).toMatchObject({ kind: 'heuristic', baseURL: 'http://localhost:8000/v1', model: 'default' });
  });
});
