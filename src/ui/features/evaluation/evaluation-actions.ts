/**
 * The evaluation's actions: compile the open environment and evaluate it in a fresh sandbox against
 * the chosen policy (Stop, Pause and Resume), and the results as JSONL.
 */
import { summarizeRollouts, type ChatClient, type RolloutRecord } from '../../../envs/index.ts';
import { recordsToJsonl } from '../../../envs/results-record.ts';
import { brokenRewardsReason } from '../../../envs/broken-rewards.ts';
import { errorMessage } from '../../../common/error-message.ts';
import { actionState } from '../../store/action-state.ts';
import { currentEnvironment, parseArgs } from '../environment/current-environment.ts';
import { compileModel } from '../environment/monaco-setup.ts';
import { environmentModel } from '../environment/editor-models.ts';
import { pausableClient } from '../jobs/pausable-client.ts';
import { buildPolicyClient } from '../policy/policy-actions.ts';
import { createJobController, runJob, stopJob } from '../jobs/job-runner.ts';
import { IDLE_RUN } from './evaluation-slice.ts';
import { usePlayground } from '../../store/index.ts';
import { isEvaluating } from '../../store/selectors.ts';
import { downloadFile } from '../../kit/download.ts';
import { auditScoring } from '../training/training-rollouts.ts';
import { recordEvaluation } from '../training/training-actions.ts';

const store = usePlayground;
/** The evaluation's Stop and pause gate. */
const evaluation = actionState(() => ({ jobs: createJobController() }));

/** What an evaluation needs before it runs: the open file compiled, its arguments, and the chosen policy. */
interface PreparedEvaluation {
  label: string;
  code: string;
  args: Record<string, unknown>;
  policy: { client: ChatClient; model: string };
}

/** Compiles the open environment and evaluates it in a fresh sandbox against the chosen policy. */
export async function startEvaluation(): Promise<void> {
  const { settings } = store.getState();
  const fail = (failure: string) => store.getState().updateRun({ status: 'failed', failure, finishedAt: Date.now() });
  const stoppedEarly = () => {
    const { records, environment } = store.getState().run;
    const sorted = sortRecords(records);
    store.getState().updateRun({
      status: 'done',
      records: sorted,
      summary: summarizeRollouts(sorted, settings.rolloutsPerTask, environment?.rewardNames ?? []),
      stoppedEarly: 'cancelled',
      finishedAt: Date.now(),
    });
  };
  await runJob<PreparedEvaluation>({
    controller: evaluation.jobs,
    isBusy: () => isEvaluating(store.getState()) || !currentEnvironment(),
    prepare: async () => {
      const saved = currentEnvironment()!;
      store.getState().updateRun({ ...IDLE_RUN, status: 'compiling', startedAt: Date.now() });
      store.getState().selectRecord(0);
      const compiled = await compileModel(environmentModel(saved.id, saved.source));
      if (!compiled.ok) {
        const first = compiled.problems[0]!;
        const count = compiled.problems.length;
        throw new Error(`${count} compile error${count === 1 ? '' : 's'} — fix ${count === 1 ? 'it' : 'them'} first. Line ${first.line}: ${first.message}`);
      }
      const args = parseArgs(settings.argsJson);
      const policy = await buildPolicyClient(saved.builtin, args);
      return { label: saved.name, code: compiled.code, args, policy };
    },
    sandbox: ({ label, code, args }) => ({ label, code, args, timeLimitMs: settings.timeLimitMs }),
    phase: async ({ prepared, gate, signal, openSession }) => {
      store.getState().updateRun({ status: 'running', startedAt: Date.now(), total: settings.numTasks * settings.rolloutsPerTask });
      const session = await openSession(pausableClient(prepared.policy.client, gate), (environment, lent) =>
        store.getState().updateRun({
          environment,
          total: Math.min(settings.numTasks, environment.numEvaluationTasks) * settings.rolloutsPerTask,
          simulator: lent.simulator,
        }),
      );
      if (signal.aborted) return stoppedEarly();
      const result = await session.evaluate(
        {
          numTasks: settings.numTasks,
          rolloutsPerTask: settings.rolloutsPerTask,
          concurrency: settings.concurrency,
          samplingArgs: { max_tokens: settings.maxTokens, temperature: settings.temperature, seed: settings.seed },
          model: prepared.policy.model,
        },
        (record, done, total) => store.getState().updateRun((current) => ({ records: [...current.records, record], done, total })),
      );
      const records = sortRecords(store.getState().run.records);
      const summary = result.summary ?? summarizeRollouts(records, settings.rolloutsPerTask, session.info.rewardNames);
      const broken = brokenRewardsMessage(records, auditScoring(session.info).weights);
      if (broken) {
        // Kept for debugging (the rollouts list the errors) but failed, and not recorded with the training run's evaluations: it measures nothing.
        store.getState().updateRun({ status: 'failed', records, summary, failure: broken, stoppedEarly: result.stoppedEarly ?? null, finishedAt: Date.now() });
        return;
      }
      store.getState().updateRun({ status: 'done', records, summary, stoppedEarly: result.stoppedEarly ?? null, finishedAt: Date.now() });
      if (store.getState().policy === 'in-tab' && !result.stoppedEarly) await recordEvaluation(summary);
    },
    stoppedBeforeStart: () => fail('Stopped before the evaluation began; nothing ran.'),
    stoppedWhileLoading: (error) => fail(error.message),
    stopped: async () => stoppedEarly(),
    failed: (error) => {
      const { records, environment } = store.getState().run;
      const sorted = sortRecords(records);
      store.getState().updateRun({
        status: 'failed',
        records: sorted,
        summary: sorted.length > 0 ? summarizeRollouts(sorted, settings.rolloutsPerTask, environment?.rewardNames ?? []) : null,
        failure: errorMessage(error),
        finishedAt: Date.now(),
      });
    },
    ended: () => store.getState().updateRun({ pausedAt: undefined }),
  });
}

/**
 * Why a finished evaluation measures nothing, as the run card says it: every weighted reward
 * function failed in every scored rollout (src/envs/broken-rewards.ts, the rule `tabrl eval` fails
 * a run on), so the summary's zeros are only the failures'; undefined when the rewards measure something.
 */
export function brokenRewardsMessage(records: readonly RolloutRecord[], weights: Readonly<Record<string, number>>): string | undefined {
  const reason = brokenRewardsReason(records, weights);
  return reason && `The evaluation measured nothing: ${reason}. Fix the reward function and evaluate again; the rollouts are kept to debug it.`;
}

function sortRecords(records: RolloutRecord[]): RolloutRecord[] {
  return [...records].sort((a, b) => a.taskIndex - b.taskIndex || a.rolloutIndex - b.rolloutIndex);
}

/** Stops the running evaluation: rollouts in flight are cancelled and the sandbox is shut down. */
export function stopEvaluation(): void {
  if (!evaluation.jobs.stop) return;
  store.getState().updateRun({ status: 'stopping' });
  stopJob(evaluation.jobs);
}

/** Pauses the running evaluation: no new rollout starts; those under way finish. */
export function pauseEvaluation(): void {
  const { jobs } = evaluation;
  if (!jobs.stop || store.getState().run.status !== 'running') return;
  jobs.gate.pause();
  store.getState().updateRun({ pausedAt: Date.now() });
}

/** Resumes a paused evaluation (its elapsed time leaves out the pause, so the ETA stays honest). */
export function resumeEvaluation(): void {
  const { pausedAt, startedAt } = store.getState().run;
  if (pausedAt === undefined) return;
  store.getState().updateRun({ pausedAt: undefined, startedAt: startedAt + (Date.now() - pausedAt) });
  evaluation.jobs.gate.resume();
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
