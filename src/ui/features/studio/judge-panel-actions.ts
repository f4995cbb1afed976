/**
 * The judge panel's actions: the panel's judges (the Judge card's model, the Policy card's, or an
 * endpoint given here), its aggregation, and an evaluation of the open environment with the panel
 * lent as its judge (`JudgePanelClient`, as `tabrl eval --judges` does). The figures — pairwise
 * agreement, Fleiss' kappa, each rollout's votes and the rollouts where the judges split — come
 * from src/envs/studio; this module only gathers the judges and runs the evaluation.
 */
import { completionText, OpenAIHttpClient, type RolloutRecord } from '../../../envs/index.ts';
import { JudgePanelClient, panelRolloutVotes, type PanelAggregation, type PanelJudge } from '../../../envs/studio/index.ts';
import { errorMessage } from '../../../common/error-message.ts';
import { actionState } from '../../store/action-state.ts';
import { currentEnvironment, parseArgs } from '../environment/current-environment.ts';
import { buildJudge } from '../judge/judge-actions.ts';
import { buildPolicyClient } from '../policy/policy-actions.ts';
import { usePlayground } from '../../store/index.ts';
import { openStudioSandbox } from './studio-sandbox.ts';
import { type JudgePanelState, type PanelJudgeEntry, type StudioUpdate } from './studio-slice.ts';

const studio = {
  getState: () => usePlayground.getState().studio,
  setState: (update: StudioUpdate) => usePlayground.getState().setStudio(update),
};
const jobs = actionState(() => ({ panel: undefined as AbortController | undefined }));

function setPanel(update: Partial<JudgePanelState>): void {
  studio.setState((state) => ({ judgePanel: { ...state.judgePanel, ...update } }));
}

/** Adds a judge to the panel (an endpoint, to be filled in). */
export function addPanelJudge(): void {
  studio.setState((state) => ({ panelJudges: [...state.panelJudges, { source: 'endpoint', baseURL: 'http://localhost:8000/v1', model: 'default' }] }));
}

/** Changes judge `index` of the panel. */
export function updatePanelJudge(index: number, change: Partial<PanelJudgeEntry>): void {
  studio.setState((state) => ({ panelJudges: state.panelJudges.map((judge, i) => (i === index ? { ...judge, ...change } : judge)) }));
}

/** Removes judge `index` from the panel. */
export function removePanelJudge(index: number): void {
  studio.setState((state) => ({ panelJudges: state.panelJudges.filter((_judge, i) => i !== index) }));
}

/** Chooses how the panel's scores become one. */
export function setPanelAggregation(panelAggregation: PanelAggregation): void {
  studio.setState({ panelAggregation });
}

/** The panel's judges as clients; a judge that cannot play (the Judge card on its offline heuristic, the scripted expert) is refused by number. */
async function panelJudges(entries: readonly PanelJudgeEntry[], builtin: string | undefined, args: Record<string, unknown>): Promise<PanelJudge[]> {
  if (entries.length < 2) throw new Error(`A panel needs two or more judges, it has ${entries.length}: add a judge.`);
  const judges: PanelJudge[] = [];
  for (const [i, entry] of entries.entries()) {
    const name = `judge ${i + 1}`;
    if (entry.source === 'judge') {
      const judge = await buildJudge();
      if (!judge)
        throw new Error(
          `Judge ${i + 1} is the Judge card's, which is on the offline heuristic: it lends no model (each environment uses its own stand-in). Pick a model in the Judge card, or make judge ${i + 1} an endpoint.`,
        );
      judges.push({ name: `${name} (${judge.label})`, client: judge.client, model: judge.model });
    } else if (entry.source === 'policy') {
      if (usePlayground.getState().policy === 'expert')
        throw new Error(`Judge ${i + 1} is the policy, but the scripted expert cannot judge: choose an endpoint, the in-tab model or WebLLM in the Policy card.`);
      const policy = await buildPolicyClient(builtin, args);
      judges.push({ name: `${name} (the policy, ${policy.model})`, client: policy.client, model: policy.model });
    } else {
      if (!/^https?:\/\//.test(entry.baseURL.trim())) throw new Error(`Judge ${i + 1}: "${entry.baseURL}" is not an http(s) URL; give the endpoint's base URL (http://localhost:8000/v1).`);
      judges.push({ name: `${name} (${entry.model} at ${entry.baseURL})`, client: new OpenAIHttpClient({ baseURL: entry.baseURL.trim(), maxRetries: 1 }), model: entry.model.trim() || 'default' });
    }
  }
  return judges;
}

/** The question (last user message) of a record. */
function questionOf(record: RolloutRecord): string {
  return [...record.prompt].reverse().find((message) => message.role === 'user')?.content ?? '';
}

/** Evaluates the open environment against the policy with the panel lent as its judge (the Settings card's tasks and rollouts per task). */
export async function startPanelEvaluation(): Promise<void> {
  if (studio.getState().judgePanel.status === 'running') return;
  const { panelJudges: entries, panelAggregation: aggregation } = studio.getState();
  const { settings } = usePlayground.getState();
  const controller = new AbortController();
  jobs.panel = controller;
  setPanel({
    status: 'running',
    environment: currentEnvironment()?.name ?? null,
    judges: [],
    aggregation,
    calls: 0,
    unscored: 0,
    offScale: 0,
    pairwise: null,
    fleissKappa: null,
    rollouts: [],
    error: null,
  });
  const records: RolloutRecord[] = [];
  let panel: JudgePanelClient | undefined;
  const publish = () => {
    if (!panel) return;
    const report = panel.report();
    const votes = panelRolloutVotes(
      panel.calls,
      records.map((record) => ({ id: `${record.taskIndex}:${record.rolloutIndex}`, question: questionOf(record), response: completionText(record.completion) })),
    );
    setPanel({
      judges: report.judges,
      calls: report.calls,
      unscored: report.unscored,
      offScale: report.offScaleReplies,
      pairwise: report.agreement.pairwise,
      fleissKappa: report.agreement.fleissKappa,
      rollouts: records.map((record, i) => ({ ...votes[i]!, question: questionOf(record), response: completionText(record.completion), reward: record.reward })),
    });
  };
  try {
    const saved = currentEnvironment();
    if (!saved) throw new Error('Open an environment first (the Environment card).');
    const args = parseArgs(settings.argsJson);
    panel = new JudgePanelClient(await panelJudges(entries, saved.builtin, args), aggregation);
    const policy = await buildPolicyClient(saved.builtin, args);
    const { session } = await openStudioSandbox({
      client: policy.client,
      judge: { client: panel, model: 'judge-panel', label: `the judge panel (${panel.judges.length} judges)` },
      signal: controller.signal,
    });
    const onStop = () => session.stop();
    controller.signal.addEventListener('abort', onStop, { once: true });
    try {
      const result = await session.evaluate(
        {
          numTasks: settings.numTasks,
          rolloutsPerTask: settings.rolloutsPerTask,
          concurrency: settings.concurrency,
          samplingArgs: { max_tokens: settings.maxTokens, temperature: settings.temperature, seed: settings.seed },
          model: policy.model,
        },
        (record) => {
          records.push(record);
          publish();
        },
      );
      records.sort((a, b) => a.taskIndex - b.taskIndex || a.rolloutIndex - b.rolloutIndex);
      publish();
      const stopped = result.stoppedEarly;
      setPanel({ status: controller.signal.aborted ? 'cancelled' : stopped ? 'failed' : 'done', error: stopped && !controller.signal.aborted ? `Stopped early: ${stopped}` : null });
    } finally {
      controller.signal.removeEventListener('abort', onStop);
      session.dispose();
    }
  } catch (error) {
    publish();
    setPanel({ status: controller.signal.aborted ? 'cancelled' : 'failed', error: controller.signal.aborted ? null : errorMessage(error) });
  } finally {
    jobs.panel = undefined;
  }
}

/** Stops the panel's evaluation; the rollouts judged so far stay. */
export function cancelPanelEvaluation(): void {
  jobs.panel?.abort();
}
