/**
 * The GRPO job's work: the engine trains on rollouts of training tasks that the sandbox makes with
 * the in-tab model; its steps, rollouts and checkpoints are kept in the open run.
 */
import { grpoKnobOptions } from '../../../rl/training-options.ts';
import { createEngineChatClient, trainGrpoInEngine, type GrpoStepReport } from '../../../workers/engine-bridge.ts';
import { usePlayground } from '../../store/index.ts';
import { engineModel } from './engine-state.ts';
import { advanceJob, persistRun, saveCheckpoint, settledWrites } from './run-records.ts';
import { auditScoring, rememberTrainingRollouts } from './training-rollouts.ts';
import { startJobSynthesis } from './pool-synthesis-job.ts';
import {
  beginJob,
  ensureRun,
  noteLentSimulator,
  withLentSimulator,
  forgettingUntrainedJob,
  jobDeclined,
  jobFinished,
  joinNotes,
  memoryBudgetOption,
  noteUnusedArgs,
  runTrainingJob,
} from './training-jobs.ts';
import { unfinishedJob, type RunJob } from './training-slice.ts';

const store = usePlayground;
/**
 * GRPO: the engine trains on rollouts of training tasks that the sandbox makes with the in-tab model.
 * An unfinished GRPO job of the open run is continued at its next step, with its settings.
 */
export async function startTraining(): Promise<void> {
  const kept = 'The weights and optimizer state so far are kept as a checkpoint.';
  await runTrainingJob('train', kept, async ({ signal, prepared, openSession }) => {
    const { trainingSettings: ts, settings } = store.getState();
    const { environment, pending } = prepared;
    const session = await openSession(createEngineChatClient(), (info, lent) => {
      noteUnusedArgs(prepared, info);
      noteLentSimulator(prepared, lent);
    });
    const scoring = auditScoring(session.info); // how the Audit panel reads this job's rollouts
    const ensured = await ensureRun(session.info.name, environment, pending !== null && session.info.name === pending.run.environment);
    if (!ensured) return jobDeclined();
    const { run, note: restoredNote } = ensured;
    const resume = pending && pending.run.id === run.id ? unfinishedJob(run) : null;
    const grpoJob: RunJob = withLentSimulator(
      resume?.phase === 'grpo'
        ? { ...resume, environment }
        : {
            phase: 'grpo',
            offset: run.grpo.length,
            nextStep: 0,
            // The table's conversion (src/rl/training-options.ts): the engine hands these to GrpoTrainer as they are.
            options: { ...grpoKnobOptions(ts), steps: ts.grpoSteps, maxTokens: ts.maxTokens, seed: settings.seed + run.grpo.length },
            environment,
          },
      prepared,
    );
    const previousJob = run.lastJob;
    beginJob(run, grpoJob, 'GRPO', joinNotes(prepared.note, restoredNote));
    store.getState().setMemoryChoice(null); // the line under the settings says this job's steps only
    const offset = grpoJob.offset;
    await forgettingUntrainedJob(grpoJob, previousJob, async () =>
      trainGrpoInEngine(
        {
          name: session.info.name,
          numTasks: session.info.numTasks,
          rollout: (taskIndex, samplingArgs) => session.rollout(taskIndex, samplingArgs, engineModel()),
          // Group rewards run in the sandbox too: the engine sends each finished group back here.
          ...(session.info.groupRewardNames?.length ? { scoreGroup: session.scoreGroup } : {}),
          // Task synthesis during training, when chosen: the job's task pool and its refresh after each weight sync (pool-synthesis-job.ts).
          ...(await startJobSynthesis(grpoJob, session, { client: createEngineChatClient(), model: engineModel() }, signal)),
        },
        // The rubric's weights let the engine fail a step whose weighted reward functions all failed (src/envs/broken-rewards.ts).
        { ...grpoJob.options, startStep: grpoJob.nextStep, checkpointEvery: ts.checkpointEvery, rewardWeights: scoring.weights, ...memoryBudgetOption(ts.memoryBudget) },
        {
          signal,
          onSteps: (reports: GrpoStepReport[]) => {
            const metrics = reports.map((report) => ({ ...report.metrics, step: offset + report.metrics.step }));
            const latest = reports.at(-1)!;
            store.getState().setTrainingRun((current) => (current ? advanceJob({ ...current, grpo: [...current.grpo, ...metrics] }, latest.metrics.step) : current));
            if (latest.rollouts.length > 0) store.getState().setLatestRollouts(latest.rollouts);
            if (latest.memory) store.getState().setMemoryChoice(latest.memory);
            for (const report of reports) rememberTrainingRollouts(session.info.name, offset + report.metrics.step, report.rollouts, scoring);
            store.getState().updateJob({ done: latest.metrics.step + 1 });
            persistRun();
          },
          onCheckpoint: (files, nextStep) => saveCheckpoint({ files, nextStep }),
        },
      ),
    );
    saveCheckpoint();
    await settledWrites();
    jobFinished(signal.aborted, signal.aborted ? kept : null, prepared.note, restoredNote);
  });
}
