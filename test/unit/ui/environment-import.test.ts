/**
 * Importing an environment file in the tab (Files → Import .ts…), over a faked engine bridge and
 * environment storage (no worker, no DOM): the header the tab's download writes picks the same tool
 * simulator on load (an endpoint by URL and model, or the offline scripted simulator), a stored
 * simulator key is never sent to a file's URL without the review's consent, a model a file cannot
 * carry leaves the person's choice alone, and a file without a header changes no setting.
 */
import { beforeEach, describe, expect, test, vi } from 'vitest';
import { simulatorHeader, type SimulatorRecord } from '../../../src/envs/studio/index.ts';
import { usePlayground } from '../../../src/ui/store/index.ts';

const saved = new Map<string, string>();
const added: { name: string; source: string }[] = [];

vi.mock('../../../src/workers/engine-bridge.ts', () => ({ onEngineError: () => {}, createEngineChatClient: () => ({}) }));
vi.mock('../../../src/ui/features/environment/environment-storage.ts', () => ({ putEnvironment: async () => {} }));
vi.mock('../../../src/ui/features/environment/environment-actions.ts', () => ({
  openEnvironment: (id: string) => usePlayground.getState().setCurrentId(id),
  addEnvironment: async (fields: { name: string; source: string }) => {
    added.push(fields);
    return 'env-added';
  },
}));
// Monaco and the sandbox frame need a DOM: the source is what the file holds.
vi.mock('../../../src/ui/features/environment/monaco-setup.ts', () => ({ compileModel: async () => ({ ok: false, problems: [] }) }));
vi.mock('../../../src/ui/features/environment/editor-models.ts', () => ({ environmentModel: (_id: string, source: string) => ({ getValue: () => source }), disposeEnvironmentModel: () => {} }));
vi.mock('../../../src/ui/features/jobs/sandbox-frame.ts', () => ({ createIframeSandbox: async () => ({}) }));
vi.mock('../../../src/workers/sandbox-bridge.ts', () => ({ SandboxStoppedError: class extends Error {}, openSandbox: async () => { throw new Error('no sandbox here'); } }));
vi.stubGlobal('localStorage', { getItem: (key: string) => saved.get(key) ?? null, setItem: (key: string, value: string) => saved.set(key, value), removeItem: (key: string) => saved.delete(key) });
vi.stubGlobal('location', { pathname: '/', search: '', hash: '', origin: 'http://127.0.0.1' });
vi.stubGlobal('history', { replaceState: () => {} });

const { importEnvironmentFile } = await import('../../../src/ui/features/transfer/transfer-actions.ts');
const { acceptReview, reviewEndpointChanges } = await import('../../../src/ui/features/share/share-actions.ts');
const { fileSimulator } = await import('../../../src/ui/features/share/file-simulator.ts');

const BODY = "import { SimulatedToolEnv } from 'tabrl';\nexport default function loadEnvironment(args) { return new SimulatedToolEnv(args); }\n";
const MINE = 'https://sim.mine.example/v1';
const THEIRS = 'https://sim.theirs.example/v1';

/** An environment file as the tab's download writes it, with `record` as its simulator header. */
function downloadedFile(record: SimulatorRecord | undefined, name = 'parcel-desk.ts'): File {
  return new File([record ? simulatorHeader(record) + BODY : BODY], name, { type: 'text/typescript' });
}

/** Imports `file`, then loads it as "Load into editor" does (optionally ticking the consent box). */
async function importAndLoad(file: File, useLinkEndpoints = false): Promise<void> {
  await importEnvironmentFile(file);
  expect(usePlayground.getState().review?.source).toContain('loadEnvironment');
  await acceptReview({ useLinkEndpoints });
}

beforeEach(() => {
  saved.clear();
  added.length = 0;
  usePlayground.setState({ simulator: { kind: 'judge', baseURL: MINE, model: 'my-sim', hasApiKey: false }, review: null, reviewFile: null });
});

describe('an imported file picks the tool simulator its header names', () => {
  test('an endpoint header sets the kind, URL and model on load, and the review says so', async () => {
    await importEnvironmentFile(downloadedFile({ label: `endpoint sim-m at ${THEIRS}`, baseURL: THEIRS, model: 'sim-m' }));
    expect(usePlayground.getState().review).toMatchObject({ simulatorKind: 'endpoint', simulatorBaseURL: THEIRS, simulatorModel: 'sim-m' });
    expect(reviewEndpointChanges()).toEqual([]);
    await acceptReview();
    expect(usePlayground.getState().simulator).toMatchObject({ kind: 'endpoint', baseURL: THEIRS, model: 'sim-m' });
    expect(added.map((entry) => entry.name)).toEqual(['parcel-desk (imported)']);
    expect(added[0]!.source).toContain('// tabrl-simulator:');
  });

  test('with a simulator key stored for another URL, the file waits for consent; without it the person keeps their endpoint', async () => {
    usePlayground.setState({ simulator: { kind: 'endpoint', baseURL: MINE, model: 'my-sim', hasApiKey: true } });
    await importEnvironmentFile(downloadedFile({ label: `endpoint sim-m at ${THEIRS}`, baseURL: THEIRS, model: 'sim-m' }));
    expect(reviewEndpointChanges()).toEqual([{ role: 'simulator', from: MINE, to: THEIRS }]);
    await acceptReview();
    expect(usePlayground.getState().simulator).toMatchObject({ kind: 'endpoint', baseURL: MINE, model: 'my-sim' });

    await importAndLoad(downloadedFile({ label: `endpoint sim-m at ${THEIRS}`, baseURL: THEIRS, model: 'sim-m' }), true);
    expect(usePlayground.getState().simulator).toMatchObject({ kind: 'endpoint', baseURL: THEIRS, model: 'sim-m' });
  });

  test('the offline scripted simulator is picked back from a heuristic header', async () => {
    await importAndLoad(downloadedFile({ label: 'the scripted simulator (offline, nearest recorded call)', model: 'heuristic' }));
    expect(usePlayground.getState().simulator).toMatchObject({ kind: 'heuristic', baseURL: MINE, model: 'my-sim' });
  });

  test('a model a file cannot carry, or no header, leaves the choice as it was', async () => {
    await importAndLoad(downloadedFile({ label: 'the policy: WebLLM SmolLM2-360M' }));
    expect(usePlayground.getState().simulator).toMatchObject({ kind: 'judge', baseURL: MINE, model: 'my-sim' });
    await importAndLoad(downloadedFile(undefined));
    expect(usePlayground.getState().simulator).toMatchObject({ kind: 'judge', baseURL: MINE, model: 'my-sim' });
  });
});

describe('fileSimulator', () => {
  test('reads the choice a header allows, only a label otherwise, and nothing from a malformed or absent header', () => {
    expect(fileSimulator(simulatorHeader({ label: 'e', baseURL: THEIRS, model: 'm' }) + BODY)).toEqual({ label: 'e', choice: { kind: 'endpoint', baseURL: THEIRS, model: 'm' } });
    expect(fileSimulator(simulatorHeader({ label: 'h', model: 'heuristic' }) + BODY)).toEqual({ label: 'h', choice: { kind: 'heuristic' } });
    expect(fileSimulator(simulatorHeader({ label: 'the in-tab model' }) + BODY)).toEqual({ label: 'the in-tab model' });
    expect(fileSimulator(`// tabrl-simulator: {"label": 3}\n${BODY}`)).toBeUndefined();
    expect(fileSimulator(`// tabrl-simulator: {not json\n${BODY}`)).toBeUndefined();
    expect(fileSimulator(BODY)).toBeUndefined();
  });
});
