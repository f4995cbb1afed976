/**
 * The tool simulator's actions: choose it, its endpoint and key (remembered in localStorage), and
 * build the simulator a run lends its environment (`LentSimulator`, see src/workers/sandbox-bridge.ts)
 * as `args.simulatorClient` — as the Judge card's judge is lent, and as `tabrl` lends `--simulator-*`.
 * The heuristic choice lends nothing: environments with simulated tools then use their own offline
 * scripted nearest-record simulator. The judge and policy choices lend the model of those cards.
 */
import { OpenAIHttpClient } from '../../../envs/index.ts';
import type { SimulatorRecord } from '../../../envs/studio/index.ts';
import { createEngineChatClient } from '../../../workers/engine-bridge.ts';
import type { LentSimulator } from '../../../workers/sandbox-bridge.ts';
import { usePlayground } from '../../store/index.ts';
import { readApiKey } from '../models/api-key.ts';
import { webllmClient } from '../models/webllm-actions.ts';
import { buildJudge, judgeLabel } from './judge-actions.ts';
import { readSimulatorApiKey, writeSimulatorApiKey } from './simulator-key.ts';
import type { SimulatorKind } from './simulator-slice.ts';

const SIMULATOR_STORAGE = 'tabrl.simulator';
const KINDS: readonly SimulatorKind[] = ['heuristic', 'judge', 'policy', 'endpoint'];

/** Reads the simulator's kind, URL and model back from localStorage (a damaged entry keeps the defaults). */
export function restoreSimulator(): void {
  try {
    const saved = JSON.parse(localStorage.getItem(SIMULATOR_STORAGE) ?? '{}') as { kind?: SimulatorKind; baseURL?: string; model?: string };
    if (saved.kind && KINDS.includes(saved.kind)) usePlayground.getState().setSimulatorKind(saved.kind);
    usePlayground.getState().setSimulatorEndpoint(saved);
  } catch {
    // keep the defaults
  }
  usePlayground.getState().setSimulatorHasApiKey(readSimulatorApiKey() !== '');
}

function remember(): void {
  const { kind, baseURL, model } = usePlayground.getState().simulator;
  localStorage.setItem(SIMULATOR_STORAGE, JSON.stringify({ kind, baseURL, model }));
}

/** Chooses where the simulated tools' results come from. */
export function chooseSimulator(kind: SimulatorKind): void {
  usePlayground.getState().setSimulatorKind(kind);
  remember();
}

/** Sets the simulator endpoint's base URL and model name. */
export function setSimulatorEndpoint(endpoint: { baseURL?: string; model?: string }): void {
  usePlayground.getState().setSimulatorEndpoint(endpoint);
  remember();
}

/** Stores the simulator endpoint's API key in localStorage (never in a store, a link, or the sandbox). */
export function setSimulatorApiKey(key: string): void {
  writeSimulatorApiKey(key);
  usePlayground.getState().setSimulatorHasApiKey(key !== '');
}

/** The Policy card's model as a simulator, or why it cannot be one. */
function policyLabel(): string {
  const { policy, model, baseURL, webllmModel } = usePlayground.getState();
  if (policy === 'endpoint') return `the policy: endpoint ${model} at ${baseURL}`;
  if (policy === 'webllm') return `the policy: WebLLM ${webllmModel}`;
  if (policy === 'in-tab') return 'the policy: the in-tab model';
  return 'the policy: the scripted expert';
}

/** A one-line description of the chosen simulator, for the run's record and messages. */
export function simulatorLabel(): string {
  const { kind, baseURL, model } = usePlayground.getState().simulator;
  if (kind === 'endpoint') return `endpoint ${model} at ${baseURL}`;
  if (kind === 'judge') return `the judge: ${judgeLabel()}`;
  if (kind === 'policy') return policyLabel();
  return 'the scripted simulator (offline, nearest recorded call)';
}

/** The simulator to lend the next run, or undefined for the heuristic (the environment's own scripted simulator); throws saying what to pick when the choice cannot simulate. */
export async function buildSimulator(): Promise<LentSimulator | undefined> {
  const state = usePlayground.getState();
  const { kind, baseURL, model } = state.simulator;
  const label = simulatorLabel();
  if (kind === 'endpoint') return { client: new OpenAIHttpClient({ baseURL, apiKey: readSimulatorApiKey() || undefined, maxRetries: 2 }), model, label };
  if (kind === 'judge') {
    const judge = await buildJudge();
    if (!judge)
      throw new Error(
        "The simulator is the Judge card's model, and the judge is the offline heuristic: pick a judge model in the Judge card, or choose another simulator in Studio → Simulated tools.",
      );
    return { client: judge.client, model: judge.model, label };
  }
  if (kind === 'policy') {
    if (state.policy === 'expert')
      throw new Error(
        "The simulator is the Policy card's model, and the policy is the scripted expert, which cannot simulate a tool: choose a model in the Policy card, or another simulator in Studio → Simulated tools.",
      );
    if (state.policy === 'endpoint') return { client: new OpenAIHttpClient({ baseURL: state.baseURL, apiKey: readApiKey() || undefined, maxRetries: 2 }), model: state.model, label };
    if (state.policy === 'webllm') return { client: await webllmClient(), model: state.webllmModel, label };
    return { client: createEngineChatClient('trained'), model: state.engine.info?.model ?? 'tiny', label };
  }
  return undefined;
}

/** The chosen simulator as a downloaded environment file records it: its label, and the `--simulator-*` values that lend the same from tabrl (an endpoint's URL and model, `heuristic`), when tabrl can. */
export function simulatorRecord(): SimulatorRecord {
  const state = usePlayground.getState();
  const { kind, baseURL, model } = state.simulator;
  const label = simulatorLabel();
  if (kind === 'endpoint') return { label, baseURL, model };
  if (kind === 'judge') return state.judge.kind === 'endpoint' ? { label, baseURL: state.judge.baseURL, model: state.judge.model } : { label };
  if (kind === 'policy') return state.policy === 'endpoint' ? { label, baseURL: state.baseURL, model: state.model } : { label };
  return { label, model: 'heuristic' };
}
