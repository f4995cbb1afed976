/**
 * The evaluation's actions: compile the open environment and evaluate it in a fresh sandbox against
 * the chosen policy (Stop, Pause and Resume), and the results as JSONL.
 */
import { summarizeRollouts, type ChatClient, type RolloutRecord } from '../envs/index.ts';
import { recordsToJsonl } from '../envs/results-record.ts';
import { errorMessage } from '../common/error-message.ts';
import { PauseGate } from '../workers/engine/pause-gate.ts';
import { evaluateInSandbox, type LentJudge } from '../workers/sandbox-bridge.ts';
import { currentEnvironment, parseArgs } from './current-environment.ts';
import { compileModel } from './editor/monaco-setup.ts';
import { environmentModel } from './editor/models.ts';
import { buildJudge } from './judge/judge-actions.ts';
import { pausableClient } from './pausable-client.ts';
import { buildPolicyClient } from './policy-actions.ts';
import { createIframeSandbox } from './sandbox-frame.ts';
import { IDLE_RUN } from './store/evaluation-slice.ts';
import { usePlayground } from './store/index.ts';
import { isEvaluating } from './store/selectors.ts';
import { downloadFile } from './transfer/download.ts';
import { recordEvaluation } from './training-actions.ts';

const store = usePlayground;
let stopController: AbortController | undefined;
/** Closed while the person has paused the evaluation: no new rollout starts. */
const evaluationGate = new PauseGate();

/** Compiles the open environment and evaluates it in a fresh sandbox against the chosen policy. */
export async function startEvaluation(): Promise<void> {
  const { run, settings } = store.getState();
  if (isEvaluating({ run })) return;
  const saved = currentEnvironment();
  if (!saved) return;
  // Stop works from the first moment: compiling, starting the policy, loading the environment.
  const controller = new AbortController();
  stopController = controller;
  const fail = (failure: string) => {
    store.getState().updateRun({ status: 'failed', failure: controller.signal.aborted ? 'Stopped before the evaluation began; nothing ran.' : failure, finishedAt: Date.now() });
    stopController = undefined;
  };
  store.getState().updateRun({ ...IDLE_RUN, status: 'compiling', startedAt: Date.now() });
  store.getState().selectRecord(0);

  const compiled = await compileModel(environmentModel(saved.id, saved.source));
  if (!compiled.ok) {
    const first = compiled.problems[0]!;
    return fail(`${compiled.problems.length} compile error${compiled.problems.length === 1 ? '' : 's'} — fix ${compiled.problems.length === 1 ? 'it' : 'them'} first. Line ${first.line}: ${first.message}`);
  }
  let args: Record<string, unknown>;
  let policy: { client: ChatClient; model: string };
  let judge: LentJudge | undefined;
  try {
    args = parseArgs(settings.argsJson);
    policy = await buildPolicyClient(saved.builtin, args);
    judge = await buildJudge();
  } catch (error) {
    return fail(errorMessage(error));
  }

  if (controller.signal.aborted) return fail('stopped');
  evaluationGate.resume();
  const started = Date.now();
  store.getState().updateRun({ status: 'running', startedAt: started, total: settings.numTasks * settings.rolloutsPerTask });
  try {
    const result = await evaluateInSandbox({
      code: compiled.code,
      label: saved.name,
      args,
      options: {
        numTasks: settings.numTasks,
        rolloutsPerTask: settings.rolloutsPerTask,
        concurrency: settings.concurrency,
        samplingArgs: { max_tokens: settings.maxTokens, temperature: settings.temperature, seed: settings.seed },
        model: policy.model,
      },
      client: pausableClient(policy.client, evaluationGate),
      ...(judge ? { judge } : {}),
      timeLimitMs: settings.timeLimitMs,
      signal: controller.signal,
      createFrame: createIframeSandbox,
      onLoaded: (environment) => store.getState().updateRun({
        environment,
        total: Math.min(settings.numTasks, environment.numEvaluationTasks) * settings.rolloutsPerTask,
      }),
      onRecord: (record, done, total) => store.getState().updateRun((current) => ({ records: [...current.records, record], done, total })),
    });
    const records = sortRecords(store.getState().run.records);
    const summary = result.summary ?? summarizeRollouts(records, settings.rolloutsPerTask, result.info?.rewardNames ?? []);
    store.getState().updateRun({
      status: 'done',
      records,
      summary,
      stoppedEarly: result.stoppedEarly ?? null,
      finishedAt: Date.now(),
    });
    if (store.getState().policy === 'in-tab' && !result.stoppedEarly) await recordEvaluation(summary);
  } catch (error) {
    const { records, environment } = store.getState().run;
    const sorted = sortRecords(records);
    store.getState().updateRun({
      status: 'failed',
      records: sorted,
      summary: sorted.length > 0 ? summarizeRollouts(sorted, settings.rolloutsPerTask, environment?.rewardNames ?? []) : null,
      failure: errorMessage(error),
      finishedAt: Date.now(),
    });
  } finally {
    stopController = undefined;
    evaluationGate.resume();
    store.getState().updateRun({ pausedAt: undefined });
  }
}

function sortRecords(records: RolloutRecord[]): RolloutRecord[] {
  return [...records].sort((a, b) => a.taskIndex - b.taskIndex || a.rolloutIndex - b.rolloutIndex);
}

/** Stops the running evaluation: rollouts in flight are cancelled and the sandbox is shut down. */
export function stopEvaluation(): void {
  if (!stopController) return;
  store.getState().updateRun({ status: 'stopping' });
  stopController.abort();
}

/** Pauses the running evaluation: no new rollout starts; those under way finish. */
export function pauseEvaluation(): void {
  if (!stopController || store.getState().run.status !== 'running') return;
  evaluationGate.pause();
  store.getState().updateRun({ pausedAt: Date.now() });
}

/** Resumes a paused evaluation (its elapsed time leaves out the pause, so the ETA stays honest). */
export function resumeEvaluation(): void {
  const { pausedAt, startedAt } = store.getState().run;
  if (pausedAt === undefined) return;
  store.getState().updateRun({ pausedAt: undefined, startedAt: startedAt + (Date.now() - pausedAt) });
  evaluationGate.resume();
}

/** The run's records as JSONL, one rollout per line, in the format `tabrl eval` writes results.jsonl (src/envs/results-record.ts). */
export function resultsAsJsonl(): string {
  return recordsToJsonl(store.getState().run.records);
}

/** Downloads the run's records as `<environment>-results.jsonl`. */
export function exportResults(): void {
  const { run } = store.getState();
  downloadFile(`${run.environment?.name ?? 'environment'}-results.jsonl`, resultsAsJsonl(), 'application/x-ndjson');
}
