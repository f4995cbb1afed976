/**
 * The Judge card's actions: choose the judge, its endpoint and key (remembered in localStorage),
 * and build the judge a run lends its environment (`LentJudge`, see src/workers/sandbox-bridge.ts).
 * The heuristic choice lends nothing: environments then use their own offline stand-in
 * (judged-writing's constraint checker, lesson 4's gullible rule).
 */
import { OpenAIHttpClient } from '../../../envs/index.ts';
import { createEngineChatClient } from '../../../workers/engine-bridge.ts';
import type { LentJudge } from '../../../workers/sandbox-bridge.ts';
import { usePlayground } from '../../store/index.ts';
import { webllmClient } from '../models/webllm-actions.ts';
import { readJudgeApiKey, writeJudgeApiKey } from './judge-key.ts';
import type { JudgeKind } from './judge-slice.ts';

const JUDGE_STORAGE = 'tabrl.judge';
const KINDS: readonly JudgeKind[] = ['heuristic', 'endpoint', 'webllm', 'in-tab'];

/** Reads the judge's kind, URL and model back from localStorage (a damaged entry keeps the defaults). */
export function restoreJudge(): void {
  try {
    const saved = JSON.parse(localStorage.getItem(JUDGE_STORAGE) ?? '{}') as { kind?: JudgeKind; baseURL?: string; model?: string };
    if (saved.kind && KINDS.includes(saved.kind)) usePlayground.getState().setJudgeKind(saved.kind);
    usePlayground.getState().setJudgeEndpoint(saved);
  } catch {
    // keep the defaults
  }
  usePlayground.getState().setJudgeHasApiKey(readJudgeApiKey() !== '');
}

function remember(): void {
  const { kind, baseURL, model } = usePlayground.getState().judge;
  localStorage.setItem(JUDGE_STORAGE, JSON.stringify({ kind, baseURL, model }));
}

/** Chooses where the judge's verdicts come from. */
export function chooseJudge(kind: JudgeKind): void {
  usePlayground.getState().setJudgeKind(kind);
  remember();
}

/** Sets the judge endpoint's base URL and model name. */
export function setJudgeEndpoint(endpoint: { baseURL?: string; model?: string }): void {
  usePlayground.getState().setJudgeEndpoint(endpoint);
  remember();
}

/** Stores the judge endpoint's API key in localStorage (never in a store, a link, or the sandbox). */
export function setJudgeApiKey(key: string): void {
  writeJudgeApiKey(key);
  usePlayground.getState().setJudgeHasApiKey(key !== '');
}

/** A one-line description of the chosen judge, for the run panel and messages. */
export function judgeLabel(): string {
  const { kind, baseURL, model } = usePlayground.getState().judge;
  if (kind === 'endpoint') return `endpoint ${model} at ${baseURL}`;
  if (kind === 'webllm') return `WebLLM ${usePlayground.getState().webllmModel}`;
  if (kind === 'in-tab') return 'the in-tab model';
  return 'the offline heuristic judge';
}

/** The judge to lend the next run, or undefined for the offline heuristic (the environment's own stand-in). */
export async function buildJudge(): Promise<LentJudge | undefined> {
  const { kind, baseURL, model } = usePlayground.getState().judge;
  const label = judgeLabel();
  if (kind === 'endpoint') return { client: new OpenAIHttpClient({ baseURL, apiKey: readJudgeApiKey() || undefined, maxRetries: 2 }), model, label };
  // The WebLLM worker holds one model: the judge uses the one picked in the WebLLM fields.
  if (kind === 'webllm') return { client: await webllmClient(), model: usePlayground.getState().webllmModel, label };
  if (kind === 'in-tab') return { client: createEngineChatClient('trained'), model: usePlayground.getState().engine.info?.model ?? 'tiny', label };
  return undefined;
}
