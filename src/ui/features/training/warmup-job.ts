/**
 * The warm-up job's work: demonstrations from the chosen teacher made in the sandbox, then SFT on
 * them in the engine, its steps and checkpoints kept in the open run.
 */
import type { ChatClient, Message, RolloutRecord } from '../../../envs/index.ts';
import { sftKnobOptions } from '../../../rl/training-options.ts';
import { createEngineChatClient, trainSftInEngine, type SftStepMetrics } from '../../../workers/engine-bridge.ts';
import { usePlayground } from '../../store/index.ts';
import { pausableClient } from '../jobs/pausable-client.ts';
import { persistRun, advanceJob, saveCheckpoint, settledWrites } from './run-records.ts';
import { appTeacherSources } from './teacher-sources.ts';
import { auditScoring } from './training-rollouts.ts';
import { beginJob, ensureRun, noteLentSimulator, withLentSimulator, jobDeclined, jobFinished, joinNotes, memoryBudgetOption, noteUnusedArgs, runTrainingJob } from './training-jobs.ts';
import { unfinishedJob, type RunJob } from './training-slice.ts';
import { brokenRewardsMessage, buildTeacher, isDemonstration, noDemonstrationsMessage, type Teacher } from './warmup-teacher.ts';

const store = usePlayground;
/**
 * Warm-up: the chosen teacher (the built-in's expert — for tasks planted backwards, their reference
 * paths, played in the sandbox —, the endpoint, or the WebLLM model; see warmup-teacher.ts) rolls out training tasks in the sandbox, passing transcripts are
 * kept, and the engine runs SFT on them. An unfinished warm-up of the open run is continued at its
 * next step, with its settings (the teacher is asked again, with the same seed).
 */
export async function startWarmup(): Promise<void> {
  await runTrainingJob('warmup', null, async ({ signal, prepared, gate, openSession, closeSession }) => {
    const { trainingSettings: ts, settings } = store.getState();
    const { environment, pending } = prepared;
    // Imported warm-up data replaces the expert's demonstrations; the sandbox then only reports the environment (name, tools).
    const imported = store.getState().importedWarmup;
    // The teacher is chosen once the environment is loaded: tasks planted backwards (info.plantedPaths) are their own expert.
    let teacher: Teacher | null = null;
    const teacherClient: ChatClient = { chat: { completions: { create: (request) => teacher!.client.chat.completions.create(request) } } };
    const session = await openSession(imported ? createEngineChatClient() : pausableClient(teacherClient, gate), (info, lent) => {
      noteUnusedArgs(prepared, info);
      noteLentSimulator(prepared, lent);
    });
    teacher = imported ? null : await buildTeacher(store.getState().teacher, { ...appTeacherSources(environment.builtin, environment.args), plantedPaths: (session.info.plantedPaths ?? 0) > 0 });
    const ensured = await ensureRun(session.info.name, environment, pending !== null && session.info.name === pending.run.environment);
    if (!ensured) return jobDeclined();
    const { run, note: restoredNote } = ensured;
    const resume = pending && pending.run.id === run.id ? unfinishedJob(run) : null;
    const demonstrations = resume?.phase === 'sft' ? resume.demonstrations : ts.demonstrations;
    const demonstrationSeed = resume?.phase === 'sft' ? resume.demonstrationSeed : settings.seed;
    store.getState().updateJob({ phase: 'making demonstrations', done: 0, doneAtPhaseStart: 0, total: Math.min(demonstrations, session.info.numTasks), phaseStartedAt: Date.now() });
    const kept: { taskIndex: number; messages: Message[] }[] = imported ? imported.transcripts.map((messages, taskIndex) => ({ taskIndex, messages })) : [];
    const tried: RolloutRecord[] = [];
    // A model teacher samples with the evaluation settings' temperature and length; the expert needs neither.
    const teacherSampling = teacher && teacher.kind !== 'expert' ? { temperature: settings.temperature, max_tokens: settings.maxTokens } : {};
    const made = imported
      ? { stoppedEarly: undefined }
      : await session.evaluate(
          {
            numTasks: demonstrations,
            rolloutsPerTask: 1,
            concurrency: teacher!.concurrency,
            samplingArgs: { seed: demonstrationSeed, ...teacherSampling },
            model: teacher!.model,
            split: 'demonstration',
            ...(teacher!.plantedPaths ? { policy: 'planted-paths' as const } : {}),
          },
          (record, done, total) => {
            tried.push(record);
            if (isDemonstration(record)) kept.push({ taskIndex: record.taskIndex, messages: [...record.prompt, ...record.completion] });
            store.getState().updateJob({ done, total });
          },
        );
    const tools = session.info.tools;
    closeSession();
    if (signal.aborted) return jobFinished(true, 'Stopped while making demonstrations.');
    if (made.stoppedEarly) throw new Error(`The warm-up teacher, ${teacher?.label ?? 'the imported data'}, failed, so nothing was trained: ${made.stoppedEarly}`);
    // Demonstrations are picked by the rewards: ones that measure nothing (src/envs/broken-rewards.ts) pick nothing real.
    const broken = teacher && brokenRewardsMessage(teacher, tried, auditScoring(session.info).weights);
    if (broken) throw new Error(broken);
    if (kept.length === 0) throw new Error(noDemonstrationsMessage(teacher ?? { label: 'the imported data' }, tried));
    // In task order, not the order they finished in, so a continued warm-up sees the same batches.
    const transcripts = kept.sort((a, b) => a.taskIndex - b.taskIndex).map((item) => item.messages);
    store.getState().setLastWarmup(imported ?? { origin: 'made', name: run.environment, transcripts });

    const current = store.getState().trainingRun ?? run;
    const sftJob: RunJob = withLentSimulator(
      resume?.phase === 'sft'
        ? { ...resume, environment }
        : {
            phase: 'sft',
            offset: current.sft.length,
            nextStep: 0,
            demonstrations,
            demonstrationSeed,
            // The table's conversion (src/rl/training-options.ts), as for GRPO.
            options: { ...sftKnobOptions(ts), seed: settings.seed, ...(tools ? { tools } : {}) },
            environment,
          },
      prepared,
    );
    beginJob(current, sftJob, `SFT on ${transcripts.length} demonstrations`, joinNotes(prepared.note, restoredNote));
    const offset = sftJob.offset;
    await trainSftInEngine(
      transcripts,
      { ...sftJob.options, startStep: sftJob.nextStep, checkpointEvery: ts.checkpointEvery, ...memoryBudgetOption(ts.memoryBudget) },
      {
        signal,
        onSteps: (steps: SftStepMetrics[]) => {
          const renumbered = steps.map((step) => ({ ...step, step: offset + step.step }));
          store.getState().setTrainingRun((latest) => (latest ? advanceJob({ ...latest, sft: [...latest.sft, ...renumbered] }, steps.at(-1)!.step) : latest));
          store.getState().updateJob({ done: steps.at(-1)!.step + 1 });
          persistRun();
        },
        onCheckpoint: (files, nextStep) => saveCheckpoint({ files, nextStep }),
      },
    );
    saveCheckpoint();
    await settledWrites();
    jobFinished(signal.aborted, `${transcripts.length} demonstrations kept${signal.aborted ? '; stopped early' : ''}.`, prepared.note, restoredNote);
  });
}
