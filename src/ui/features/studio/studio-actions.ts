/**
 * The Studio tab's actions: tasks from documents (synthesis with Cancel, "Open as environment"),
 * tasks from traces (with their tools simulated: fidelity, tasks planted backwards), calibration of the open environment (its training tasks, K rollouts each, in a
 * fresh sandbox) with "Use learnable tasks", and the audit of an evaluation's or a training run's
 * rollouts with rubric extraction. Library code from src/envs does the work; the roles are played
 * by the offline heuristic rules, the Policy card's model or the Judge card's.
 */
import { type ChatClient, type RolloutRecord, type Task } from '../../../envs/index.ts';
import {
  audit,
  auditCriteriaExamples,
  calibrateRecords,
  calibratedBuiltinEnvironmentFile,
  HeuristicStudioClient,
  keptTasks,
  proposeCriteria,
  qaEnvironmentFile,
  HeuristicToolSolverClient,
  plantBackwardsTasks,
  plantedEnvironmentTask,
  refineSimulator,
  ScriptedSimulatorClient,
  simulatedEnvironmentFile,
  splitHeldOut,
  verifyBackwardsTasks,
  synthesizeTasks,
  tasksFromTraces,
  auditRolloutsFromRecords,
  type AuditRollout,
  type HeuristicRole,
} from '../../../envs/studio/index.ts';
import { errorMessage } from '../../../common/error-message.ts';
import { openSandbox } from '../../../workers/sandbox-bridge.ts';
import { actionState } from '../../store/action-state.ts';
import { currentEnvironment, parseArgs } from '../environment/current-environment.ts';
import { countOf } from '../../kit/result-text.ts';
import { compileModel } from '../environment/monaco-setup.ts';
import { environmentModel } from '../environment/editor-models.ts';
import { addEnvironment } from '../environment/environment-actions.ts';
import { buildJudge, judgeLabel } from '../judge/judge-actions.ts';
import { buildSimulator } from '../judge/simulator-actions.ts';
import { buildPolicyClient } from '../policy/policy-actions.ts';
import { createIframeSandbox } from '../jobs/sandbox-frame.ts';
import { usePlayground } from '../../store/index.ts';
import { addCriteriaToSource } from './criteria-source.ts';
import { scriptedStudent } from './scripted-student.ts';
import { tasksFromSource, withTasksList } from './task-list.ts';
import type { AuditState, CalibrationState, StudioDocumentEntry, StudioRoleSource, StudioUpdate, SynthesisState, ToolSimulationState } from './studio-slice.ts';
import { auditScoring, trainingRollouts, type AuditScoring } from '../training/training-rollouts.ts';

/** The studio's part of the one store, read and written as its own state. */
const studio = {
  getState: () => usePlayground.getState().studio,
  setState: (update: StudioUpdate) => usePlayground.getState().setStudio(update),
};
/** The studio's unrendered state: the Cancel of each job in progress, and the calibration's rollouts (the first of each task makes the task of "Use learnable tasks"). */
const jobs = actionState(() => ({
  synthesis: undefined as AbortController | undefined,
  calibration: undefined as AbortController | undefined,
  audit: undefined as AbortController | undefined,
  calibrationRecords: [] as RolloutRecord[],
}));

function setSynthesis(update: Partial<SynthesisState>): void {
  studio.setState((state) => ({ synthesis: { ...state.synthesis, ...update } }));
}
function setCalibration(update: Partial<CalibrationState>): void {
  studio.setState((state) => ({ calibration: { ...state.calibration, ...update } }));
}
function setToolSimulation(update: Partial<ToolSimulationState>): void {
  studio.setState((state) => ({ toolSimulation: { ...state.toolSimulation, ...update } }));
}
function setAudit(update: Partial<AuditState>): void {
  studio.setState((state) => ({ audit: { ...state.audit, ...update } }));
}

// ---------------------------------------------------------------- documents

/** Adds documents (dropped files or pasted text); an empty one is refused with its name. */
export function addDocuments(documents: StudioDocumentEntry[]): void {
  const empty = documents.find((document) => document.text.trim() === '');
  studio.setState((state) => ({
    documents: [...state.documents, ...documents.filter((document) => document.text.trim() !== '')],
    synthesis: empty ? { ...state.synthesis, error: `"${empty.name}" is empty: it holds no text to make tasks from.` } : state.synthesis,
  }));
}

/** Reads dropped or picked files as documents (plain text and Markdown). */
export async function addDocumentFiles(files: readonly File[]): Promise<void> {
  addDocuments(await Promise.all(files.map(async (file) => ({ name: file.name, text: await file.text() }))));
}

/** Removes document `index`. */
export function removeDocument(index: number): void {
  studio.setState((state) => ({ documents: state.documents.filter((_document, i) => i !== index) }));
}

/** The client and model name that play `role` from `source`. */
export async function roleClient(source: StudioRoleSource, role: HeuristicRole): Promise<{ client: ChatClient; model: string; label: string }> {
  if (source === 'policy') {
    if (usePlayground.getState().policy === 'expert')
      throw new Error(
        `The scripted expert cannot play the ${role}: it only answers its built-in's tasks. Pick "Offline heuristic", or choose an endpoint, the in-tab model or WebLLM in the Policy card.`,
      );
    const policy = await buildPolicyClient(currentEnvironment()?.builtin, {});
    return { ...policy, label: `the policy (${policy.model})` };
  }
  if (source === 'judge') {
    const judge = await buildJudge();
    if (judge) return { client: judge.client, model: judge.model, label: judge.label };
  }
  return { client: new HeuristicStudioClient(role), model: `heuristic-${role}`, label: `the offline heuristic ${role}` };
}

/** Synthesizes tasks from the documents: generator → candidates → open-book and closed-book checks by the solver. */
export async function startSynthesis(): Promise<void> {
  if (studio.getState().synthesis.status === 'running') return;
  const { documents, generator, solver, k, questionsPerChunk } = studio.getState();
  if (documents.length === 0) {
    setSynthesis({ status: 'failed', error: 'Add a document first: drop a .txt or .md file, or paste text.' });
    return;
  }
  const controller = new AbortController();
  jobs.synthesis = controller;
  setSynthesis({ status: 'running', progress: null, tasks: [], report: null, error: null });
  try {
    const generatorClient = await roleClient(generator, 'generator');
    const solverClient = await roleClient(solver, 'solver');
    const result = await synthesizeTasks({
      documents: documents.map(({ name, text, paragraphs }) => ({ name, text, ...(paragraphs ? { paragraphs } : {}) })),
      generator: generatorClient.client,
      generatorModel: generatorClient.model,
      solver: solverClient.client,
      solverModel: solverClient.model,
      k,
      questionsPerChunk,
      concurrency: 4,
      signal: controller.signal,
      onProgress: (progress) => setSynthesis({ progress }),
      onCandidate: (task) => studio.setState((state) => ({ synthesis: { ...state.synthesis, tasks: [...state.synthesis.tasks, task] } })),
    });
    const stopped = result.report.stoppedEarly;
    setSynthesis({
      status: controller.signal.aborted ? 'cancelled' : stopped ? 'failed' : 'done',
      tasks: result.tasks,
      report: result.report,
      error: stopped && !controller.signal.aborted ? `Stopped early: ${stopped}. The candidates decided before that are kept below.` : null,
    });
  } catch (error) {
    setSynthesis({ status: controller.signal.aborted ? 'cancelled' : 'failed', error: controller.signal.aborted ? null : errorMessage(error) });
  } finally {
    jobs.synthesis = undefined;
  }
}

/** Cancels the synthesis: calls in flight are aborted; decided candidates stay. */
export function cancelSynthesis(): void {
  jobs.synthesis?.abort();
}

/** Opens the kept tasks as a new environment file in the editor (closed-book questions, exact-match reward). */
export async function openSynthesisAsEnvironment(): Promise<boolean> {
  const { synthesis, documents } = studio.getState();
  const tasks = keptTasks(synthesis.tasks);
  if (tasks.length === 0) {
    setSynthesis({ error: 'No task was kept, so there is no environment to open. Try other documents, more questions per chunk, or a stronger generator.' });
    return false;
  }
  const origin = `from ${documents.map((document) => document.name).join(', ')}`;
  await addEnvironment({ name: 'studio-tasks', source: qaEnvironmentFile(tasks, { name: 'studio-tasks', origin }) });
  return true;
}

// ---------------------------------------------------------------- traces

/** Reads a JSONL of traces (chat logs or results.jsonl) into tasks; malformed lines are reported by number. */
export function importTraces(fileName: string, text: string): void {
  if (text.trim() === '') {
    studio.setState({ traces: null, tracesError: `"${fileName}" is empty: a traces file has one JSON conversation per line.` });
    return;
  }
  const parse = tasksFromTraces(text);
  studio.setState({
    toolSimulation: { status: 'idle', job: null, rounds: [], planted: [], error: null },
    traces: { fileName, parse },
    tracesError: parse.tasks.length === 0 ? `No task could be read from "${fileName}": ${parse.skipped.length} line${parse.skipped.length === 1 ? '' : 's'} skipped (see below).` : null,
  });
}

/** Opens the traces' tasks as an environment a judge grades with the original answers as a guide (it needs a judge from the Judge card). */
export async function openTracesAsEnvironment(): Promise<boolean> {
  const traces = studio.getState().traces;
  if (!traces || traces.parse.tasks.length === 0) return false;
  // As `tabrl tasks from-traces` writes it: the conversation up to the last user turn, graded 0–10 by the judge with the original answer as a guide;
  // when the agent used tools, a tool environment whose tools answer from the recorded calls.
  const tasks: Task[] = traces.parse.tasks.map((task) => ({ prompt: task.prompt, answer: task.info.reference ?? '', info: { line: task.info.line } }));
  const origin = `from ${traces.fileName}`;
  const { tools, records } = traces.parse;
  const source =
    tools.length > 0
      ? simulatedEnvironmentFile({ name: 'trace-tasks', tasks, tools, records, scoring: 'judge-grade', origin })
      : qaEnvironmentFile(tasks, { name: 'trace-tasks', scoring: 'judge-grade', origin });
  await addEnvironment({ name: 'trace-tasks', source });
  return true;
}

// ---------------------------------------------------------------- simulated tools

/** Held-out share, seed, refinement rounds and planted tasks of the tab's tool simulation (the CLI's defaults, two rounds). */
const SIMULATION = { heldOut: 0.25, seed: 0, rounds: 2, plantedTasks: 8, k: 2 };

/** The simulator of the traces' tools: the one the tab lends every run (the card's choice), else the scripted nearest-record simulator. */
async function simulatorClient(): Promise<{ client: ChatClient; model: string }> {
  const lent = await buildSimulator();
  return lent ? { client: lent.client, model: lent.model } : { client: new ScriptedSimulatorClient(), model: 'scripted' };
}

/** Measures the simulator on a held-out share of the traces' recorded calls, refining its prompt for a second round (`tabrl simulate --rounds 2`). */
export async function measureToolFidelity(): Promise<void> {
  const traces = studio.getState().traces;
  if (!traces || traces.parse.records.length === 0) return;
  setToolSimulation({ status: 'running', job: 'fidelity', rounds: [], error: null });
  try {
    const { client, model } = await simulatorClient();
    const split = splitHeldOut(traces.parse.records, SIMULATION.heldOut, SIMULATION.seed);
    if (split.heldOut.length === 0) throw new Error('No recorded call can be held out: each tool needs at least two recorded calls to measure fidelity.');
    await refineSimulator(split, {
      tools: traces.parse.tools,
      client,
      model,
      seed: SIMULATION.seed,
      rounds: SIMULATION.rounds,
      onRound: ({ examples: _examples, ...round }) => studio.setState((state) => ({ toolSimulation: { ...state.toolSimulation, rounds: [...state.toolSimulation.rounds, round] } })),
    });
    setToolSimulation({ status: 'done' });
  } catch (error) {
    setToolSimulation({ status: 'failed', error: errorMessage(error) });
  }
}

/** Plants tasks backwards in the simulated backend, keeps those the solver (Solver choice) needs the tools for, and opens them as an environment. */
export async function plantToolTasksAndOpen(): Promise<boolean> {
  const state = studio.getState();
  const traces = state.traces;
  if (!traces || traces.parse.records.length === 0) return false;
  setToolSimulation({ status: 'running', job: 'plant', planted: [], error: null });
  try {
    const planted = plantBackwardsTasks(traces.parse.records, SIMULATION.plantedTasks, SIMULATION.seed, ['field']);
    if (planted.length === 0) throw new Error('No recorded result is a JSON object with a text or number field to plant an answer in.');
    const simulator = await simulatorClient();
    const solver = state.solver === 'heuristic' ? { client: new HeuristicToolSolverClient(), model: 'heuristic-tool-solver' } : await roleClient(state.solver, 'solver');
    const { tools, records } = traces.parse;
    const verified = await verifyBackwardsTasks(planted, {
      tools,
      records,
      simulator: simulator.client,
      simulatorModel: simulator.model,
      solver: solver.client,
      solverModel: solver.model,
      k: SIMULATION.k,
    });
    setToolSimulation({ status: 'done', planted: verified });
    const kept = verified.filter((task) => task.kept);
    if (kept.length === 0) return false;
    const source = simulatedEnvironmentFile({
      name: 'planted-tasks',
      tasks: kept.map(plantedEnvironmentTask),
      tools,
      records,
      scoring: 'exact',
      origin: `planted backwards from ${traces.fileName}`,
    });
    await addEnvironment({ name: 'planted-tasks', source });
    return true;
  } catch (error) {
    setToolSimulation({ status: 'failed', error: errorMessage(error) });
    return false;
  }
}

// ---------------------------------------------------------------- calibration

/** Sets the keep band [lo, hi] and relabels the calibrated tasks. */
export function setKeepBand(keep: [number, number]): void {
  studio.setState({ keep });
  const { calibration } = studio.getState();
  if (calibration.tasks.length > 0 && keep[0] < keep[1]) setCalibration({ tasks: calibrateRecords(jobs.calibrationRecords, [], keep) });
}

/** Runs K rollouts of each training task of the open environment against the policy and calibrates every task. */
export async function startCalibration(): Promise<void> {
  if (studio.getState().calibration.status === 'running') return;
  const saved = currentEnvironment();
  if (!saved) return;
  const { calibrationK, calibrationTasks, keep } = studio.getState();
  const { settings } = usePlayground.getState();
  const controller = new AbortController();
  jobs.calibration = controller;
  jobs.calibrationRecords = [];
  setCalibration({ status: 'running', environment: saved.name, done: 0, total: calibrationTasks * calibrationK, tasks: [], error: null });
  try {
    if (!(keep[0] < keep[1])) throw new Error(`The keep band must have lo < hi, got ${keep[0]}–${keep[1]}.`);
    const compiled = await compileModel(environmentModel(saved.id, saved.source));
    if (!compiled.ok) throw new Error(`The environment has ${compiled.problems.length} compile error(s); fix them first. Line ${compiled.problems[0]!.line}: ${compiled.problems[0]!.message}`);
    const args = parseArgs(settings.argsJson);
    const policy = studio.getState().calibrationPolicy === 'student' ? studentPolicy(environmentModel(saved.id, saved.source).getValue(), settings.seed) : await buildPolicyClient(saved.builtin, args);
    const judge = await buildJudge();
    const session = await openSandbox({
      code: compiled.code,
      label: saved.name,
      args,
      client: policy.client,
      ...(judge ? { judge } : {}),
      timeLimitMs: settings.timeLimitMs,
      signal: controller.signal,
      createFrame: createIframeSandbox,
    });
    const onStop = () => session.stop();
    controller.signal.addEventListener('abort', onStop, { once: true });
    let result: { stoppedEarly?: string };
    try {
      setCalibration({ total: Math.min(calibrationTasks, session.info.numTasks) * calibrationK });
      result = await session
        .evaluate(
          {
            numTasks: calibrationTasks,
            rolloutsPerTask: calibrationK,
            concurrency: settings.concurrency,
            // Calibration needs varied samples: at temperature 0 every rollout of a task is the same.
            samplingArgs: { max_tokens: settings.maxTokens, temperature: Math.max(settings.temperature, 0.7), seed: settings.seed },
            model: policy.model,
            split: 'train',
          },
          (record, done, total) => {
            jobs.calibrationRecords.push(record);
            setCalibration({ done, total });
          },
        )
        .catch((error: unknown) => {
          if (controller.signal.aborted) return { stoppedEarly: 'cancelled' };
          throw error;
        });
    } finally {
      controller.signal.removeEventListener('abort', onStop);
      session.dispose();
    }
    setCalibration({
      status: result.stoppedEarly ? 'cancelled' : 'done',
      tasks: calibrateRecords(jobs.calibrationRecords, [], keep),
      error: result.stoppedEarly && result.stoppedEarly !== 'cancelled' ? `Stopped early: ${result.stoppedEarly}` : null,
    });
  } catch (error) {
    setCalibration({ status: 'failed', tasks: calibrateRecords(jobs.calibrationRecords, [], keep), error: errorMessage(error) });
  } finally {
    jobs.calibration = undefined;
  }
}

/** The offline scripted student over the file's TASKS, or a clear error when the file has none. */
function studentPolicy(source: string, seed: number): { client: ChatClient; model: string } {
  const tasks = tasksFromSource(source);
  if (!tasks)
    throw new Error("The scripted student answers only files with an `export const TASKS: Task[] = [...]` list (those the studio generates). Calibrate against the Policy card's model instead.");
  return { client: scriptedStudent(tasks, seed), model: 'scripted-student' };
}

/** Stops the calibration; the tasks calibrated so far stay. */
export function cancelCalibration(): void {
  jobs.calibration?.abort();
}

/** The tasks the learnable rows were made from (question, answer and info of each task's first rollout). */
function learnableTasks(): Task[] {
  const learnable = new Set(
    studio
      .getState()
      .calibration.tasks.filter((task) => task.label === 'learnable')
      .map((task) => task.taskIndex),
  );
  const seen = new Set<number>();
  const tasks: Task[] = [];
  for (const record of [...jobs.calibrationRecords].sort((a, b) => a.taskIndex - b.taskIndex)) {
    if (!learnable.has(record.taskIndex) || seen.has(record.taskIndex)) continue;
    seen.add(record.taskIndex);
    const question = [...record.prompt].reverse().find((message) => message.role === 'user')?.content ?? '';
    tasks.push({ question, ...(record.answer !== undefined ? { answer: record.answer } : {}), info: record.info, ...(record.task ? { task: record.task } : {}) });
  }
  return tasks;
}

/** The arguments the calibration ran with, for the calibrated file to remember (none when the settings' JSON does not parse). */
function calibrationArgs(): Record<string, unknown> {
  try {
    return parseArgs(usePlayground.getState().settings.argsJson);
  } catch {
    return {};
  }
}

/** Opens a new environment file over the learnable tasks only (a built-in restricted with withTasks, or a generated file's TASKS replaced). */
export async function openLearnableTasks(): Promise<boolean> {
  const saved = currentEnvironment();
  const tasks = learnableTasks();
  if (!saved) return false;
  if (tasks.length === 0) {
    setCalibration({ error: 'No task is learnable in the keep band: widen the band, or calibrate more tasks.' });
    return false;
  }
  const source = saved.builtin
    ? // The same file tabrl calibrate writes, so a downloaded copy also runs under tabrl eval (which knows only the 'tabrl' module names).
      calibratedBuiltinEnvironmentFile(saved.builtin, tasks, `calibrated in the playground, ${studio.getState().calibrationK} rollouts per task`, calibrationArgs())
    : withTasksList(saved.source, tasks);
  if (!source) {
    setCalibration({
      error: 'This file has no `export const TASKS: Task[] = [...]` list to filter, and it does not start from a built-in: download calibration.jsonl and keep the learnable tasks by hand.',
    });
    return false;
  }
  await addEnvironment({ name: `${saved.name} (learnable)`, source });
  return true;
}

// ---------------------------------------------------------------- audit

/** The rollouts to audit and how to read their scores (the rubric's weights and metric kinds, when known). */
export function auditSubject(): { subject: string; rollouts: AuditRollout[]; scoring: AuditScoring | null } {
  if (studio.getState().auditSource === 'training') {
    const { environment, rollouts, scoring } = trainingRollouts();
    return { subject: `the training run on ${environment ?? '(none yet)'}: ${countOf(rollouts.length, 'rollout')}`, rollouts: [...rollouts], scoring };
  }
  const { records, environment } = usePlayground.getState().run;
  return {
    subject: `the evaluation of ${environment?.name ?? 'the open environment'}: ${countOf(records.length, 'rollout')}`,
    rollouts: auditRolloutsFromRecords(records),
    scoring: environment ? auditScoring(environment) : null,
  };
}

/** What the chosen rollouts' reward is made of, for the hindsight judge: `reward = 1 × winReward + 0 × invalidMovesMetric (a metric, lower is better)`. */
function describeRubric({ weights, metrics }: AuditScoring): string {
  const meaning: Record<string, string> = { check: 'a pass/fail check', higherIsBetter: 'higher is better', lowerIsBetter: 'lower is better', info: 'for information' };
  const terms = Object.entries(weights).map(([name, weight]) => (weight === 0 ? `0 × ${name} (a metric, not paid: ${meaning[metrics[name] ?? 'check']})` : `${weight} × ${name}`));
  return `reward = ${terms.join(' + ')}`;
}

/** Audits the chosen rollouts: the cheap detectors, then the judge's hindsight review of the top and a random sample. */
export async function startAudit(): Promise<void> {
  if (studio.getState().audit.status === 'running') return;
  const { subject, rollouts, scoring } = auditSubject();
  const controller = new AbortController();
  jobs.audit = controller;
  setAudit({ status: 'running', subject, result: null, error: null, proposed: [], criteriaNote: null, criteriaSnippet: null });
  try {
    if (rollouts.length === 0)
      throw new Error(
        studio.getState().auditSource === 'training' ? 'No training rollouts yet: train a few GRPO steps, then audit.' : 'No evaluation yet: evaluate the environment first, then audit its rollouts.',
      );
    const judge = await roleClient('judge', 'judge');
    const rubricDescription = scoring ? describeRubric(scoring) : undefined;
    const result = await audit(rollouts, {
      judge: judge.client,
      judgeModel: judge.model,
      ...(scoring ? { weights: scoring.weights, metrics: scoring.metrics } : {}),
      ...(rubricDescription ? { rubricDescription } : {}),
      signal: controller.signal,
    });
    setAudit({ status: 'done', result, error: result.stoppedEarly ? `The judge's review stopped early: ${result.stoppedEarly}. The detectors' findings stand.` : null });
  } catch (error) {
    setAudit({ status: controller.signal.aborted ? 'cancelled' : 'failed', error: errorMessage(error) });
  } finally {
    jobs.audit = undefined;
  }
}

/** Cancels the audit's judge review. */
export function cancelAudit(): void {
  jobs.audit?.abort();
}

/** Asks the judge for yes/no criteria that would catch the rollouts it said did not earn their reward; the person reviews them. */
export async function proposeCriteriaFromAudit(): Promise<void> {
  const { result } = studio.getState().audit;
  if (!result) return;
  const examples = auditCriteriaExamples(result, auditSubject().rollouts);
  if (examples.length === 0) return;
  setAudit({ proposing: true, error: null });
  try {
    const judge = await roleClient('judge', 'judge');
    const criteria = await proposeCriteria({ judge: judge.client, judgeModel: judge.model, examples, purpose: 'failures' });
    setAudit({ proposed: criteria.map((criterion) => ({ criterion, accepted: true })) });
  } catch (error) {
    setAudit({ error: `Proposing criteria failed (${judgeLabel()}): ${errorMessage(error)}` });
  } finally {
    setAudit({ proposing: false });
  }
}

/** Accepts or rejects proposed criterion `index`. */
export function toggleCriterion(index: number): void {
  setAudit({ proposed: studio.getState().audit.proposed.map((item, i) => (i === index ? { ...item, accepted: !item.accepted } : item)) });
}

/** Opens a copy of the open environment with the accepted criteria as a criteria judge gating its reward (or shows the code to paste). */
export async function addAcceptedCriteria(): Promise<boolean> {
  const saved = currentEnvironment();
  const accepted = studio
    .getState()
    .audit.proposed.filter((item) => item.accepted)
    .map((item) => item.criterion);
  if (!saved) return false;
  const source = environmentModel(saved.id, saved.source).getValue();
  const edit = addCriteriaToSource(source, accepted);
  if (!edit.ok) {
    setAudit({ criteriaNote: `Could not add the criteria to "${saved.name}" automatically: ${edit.reason}. Paste this into its loadEnvironment:`, criteriaSnippet: edit.snippet });
    return false;
  }
  await addEnvironment({ name: `${saved.name} + criteria`, source: edit.source, ...(saved.builtin ? { builtin: saved.builtin } : {}) });
  setAudit({
    criteriaNote: `Opened "${saved.name} + criteria" with ${accepted.length} criteria judged by the Judge card's judge; each is logged as criterion_<name>. They gate the reward: it is the file's own reward × the weighted fraction of criteria met, so a response that breaks them no longer passes. Evaluate or train on it.`,
    criteriaSnippet: null,
  });
  return true;
}
