/**
 * `tabrl synth DOCS... --out DIR`: grounded task synthesis from documents (src/envs/studio). Writes
 * DIR/tasks.jsonl one candidate at a time (kept or rejected, with the reason), DIR/report.json
 * (counts per stage, calls, pass rates, time) and DIR/env.ts, an environment over the kept tasks
 * that runs with `tabrl eval DIR/env.ts`. Exit code: 0 when it finished, 1 when a fatal error
 * (unreachable model, failing judge) stopped it — what was made is on disk either way — 2 for a
 * usage mistake, 130/143 when interrupted.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { type ChatClient } from '../envs/index.ts';
import { EmptyDocumentError, keptTasks, qaEnvironmentFile, synthesizedTaskLine, synthesizeTasks, type StudioDocument, type SynthesisReport } from '../envs/studio/index.ts';
import { CliError } from './cli-error.ts';
import { createRoleClient, roleOptions, roleSettingsFromFlags, roleUsage, type RoleSettings } from './model-roles.ts';
import { OutputWriteError, recordFailureInReport } from './run-status.ts';
import { capText } from '../isolation/message-check.ts';
import { errorMessage } from '../common/error-message.ts';
import { onStopSignal } from './stop-signals.ts';
import { integerFlag, numberFlag, parseFlags } from './flags.ts';
import { JsonlAppender, prepareStudioFolder, writeWhole } from './studio-output.ts';
import { ProgressBar } from './terminal.ts';
import { runSynthBackwards } from './synth-backwards.ts';

/** Usage text of `tabrl synth`. */
const SYNTH_USAGE = `Usage: tabrl synth DOCS... --generator-base-url URL --generator-model NAME
                   --solver-base-url URL --solver-model NAME --out DIR [options]

Makes question/answer tasks grounded in documents (.md, .txt, or folders of them): the generator
proposes pairs from each chunk, the solver answers each question k times with the chunk (kept when
enough answers match) and k times without it (the closed-book pass rate shows what grounding adds).

Models (each also --<role>-model local:tiny or local:<model-dir>):
${roleUsage(['generator', 'solver'], 30)}
${roleUsage(['judge'], 30, { judge: ['compare answers with this judge (yes/no) instead of normalised exact match;', 'env.ts is then judge-scored too'] })}

Options:
  --out DIR                   output folder (required): tasks.jsonl, report.json, env.ts
  -k N                        open-book and closed-book attempts per candidate (default 3)
  --questions-per-chunk N     questions asked per chunk (default 3)
  --max-chunk-chars N         longest chunk in characters (default 1500)
  --min-open-book RATE        keep a candidate when at least this share of open-book answers match (default 0.5)
  --max-closed-book RATE      reject a candidate answered this often without the document (default 1: never)
  -c, --concurrency C         model calls in flight (default 8)
  --timeout SECONDS           per-request timeout (default 120)
  --overwrite                 replace the outputs in --out
  --json                      print the report as JSON

tabrl synth --backwards SOURCE ... plants tool-using tasks in a simulated backend instead
(tabrl synth --backwards --help).`;

const OUTPUTS = ['tasks.jsonl', 'report.json', 'env.ts'];

/** Runs `tabrl synth`; returns the exit code. */
export async function runSynth(argv: string[]): Promise<number> {
  if (argv.includes('--backwards')) return runSynthBackwards(argv);
  const { values, positionals } = parseFlags({
    args: argv,
    allowPositionals: true,
    options: {
      ...roleOptions(['generator', 'solver', 'judge']),
      out: { type: 'string' },
      k: { type: 'string', short: 'k' },
      'questions-per-chunk': { type: 'string' },
      'max-chunk-chars': { type: 'string' },
      'min-open-book': { type: 'string' },
      'max-closed-book': { type: 'string' },
      concurrency: { type: 'string', short: 'c' },
      timeout: { type: 'string' },
      overwrite: { type: 'boolean' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(SYNTH_USAGE);
    return 0;
  }
  if (positionals.length === 0) throw new CliError(`give at least one document (a .md or .txt file, or a folder of them)\n\n${SYNTH_USAGE}`, 2);
  if (!values.out) throw new CliError('--out DIR is required (the folder for tasks.jsonl, report.json and env.ts)', 2);
  const generatorSettings = roleSettingsFromFlags(values, 'generator', { required: true, purpose: '(the model that proposes questions)' })!;
  const solverSettings = roleSettingsFromFlags(values, 'solver', { required: true, purpose: '(the model that answers them to verify them)' })!;
  const judgeSettings = roleSettingsFromFlags(values, 'judge');
  const k = integerFlag(values.k, '-k', 3, 1);
  const questionsPerChunk = integerFlag(values['questions-per-chunk'], '--questions-per-chunk', 3, 1);
  const maxChars = integerFlag(values['max-chunk-chars'], '--max-chunk-chars', 1500, 50);
  const minOpenBookPassRate = numberFlag(values['min-open-book'], '--min-open-book', 0.5, 0, 1);
  const maxClosedBookPassRate = numberFlag(values['max-closed-book'], '--max-closed-book', 1, 0, 1);
  const concurrency = integerFlag(values.concurrency, '--concurrency', 8, 1);
  const timeoutMs = numberFlag(values.timeout, '--timeout', 120, 0.001, 86_400) * 1000;

  const documents = readDocuments(positionals);
  prepareStudioFolder(values.out, OUTPUTS, values.overwrite === true);
  const clientOptions = { timeoutMs };
  const generator = await createRoleClient('generator', generatorSettings, clientOptions);
  // One local model serves both roles (loaded once); endpoints and the heuristic get a client per role.
  const sameLocalModel = solverSettings.model.startsWith('local:') && solverSettings.model === generatorSettings.model;
  const solver = sameLocalModel ? generator : await createRoleClient('solver', solverSettings, clientOptions);
  const judge = judgeSettings ? await createRoleClient('judge', judgeSettings, clientOptions) : undefined;

  const out = values.out;
  const settings: SynthesisSettings = {
    documents: documents.map((document) => document.name),
    generator: generatorSettings,
    solver: solverSettings,
    ...(judgeSettings ? { judge: judgeSettings } : {}),
    k,
    questionsPerChunk,
    maxChunkChars: maxChars,
    minOpenBookPassRate,
    maxClosedBookPassRate,
    concurrency,
  };
  writeWhole(join(out, 'report.json'), `${JSON.stringify({ status: 'running', settings }, null, 2)}\n`);
  try {
    return await synthesizeInto(out, settings, { documents, generator, solver, judge, json: values.json === true });
  } catch (error) {
    // report.json never stays "running": whatever stopped the command is written down (a failing write too, when the disk lets it).
    recordFailureInReport(join(out, 'report.json'), { settings }, capText(errorMessage(error), 2000));
    if (error instanceof OutputWriteError)
      throw new CliError(`${error.message}; tasks.jsonl holds the candidates decided so far. Make room (or fix the folder), then run it again with --out ${out} --overwrite`);
    throw error;
  }
}

/** The settings of a synthesis, as report.json records them. */
interface SynthesisSettings {
  documents: string[];
  generator: RoleSettings;
  solver: RoleSettings;
  judge?: RoleSettings;
  k: number;
  questionsPerChunk: number;
  maxChunkChars: number;
  minOpenBookPassRate: number;
  maxClosedBookPassRate: number;
  concurrency: number;
}

/** What synthesizeInto needs besides the folder and the settings: the documents, the clients, and --json. */
interface SynthesisRun {
  documents: StudioDocument[];
  generator: ChatClient;
  solver: ChatClient;
  judge: ChatClient | undefined;
  json: boolean;
}

/** Synthesizes tasks into `out` (tasks.jsonl as they are decided, then report.json and env.ts) and prints the report; returns the exit code. */
async function synthesizeInto(out: string, settings: SynthesisSettings, run: SynthesisRun): Promise<number> {
  const { documents, generator, solver, judge, json } = run;
  const {
    k,
    questionsPerChunk,
    minOpenBookPassRate,
    maxClosedBookPassRate,
    concurrency,
    maxChunkChars: maxChars,
    generator: generatorSettings,
    solver: solverSettings,
    judge: judgeSettings,
  } = settings;
  const lines = new JsonlAppender(join(out, 'tasks.jsonl'));
  const stop = onStopSignal();
  let progress: ProgressBar | undefined;
  let report: SynthesisReport;
  let tasks;
  try {
    ({ tasks, report } = await synthesizeTasks({
      documents,
      generator,
      solver,
      ...(judge ? { judge } : {}),
      generatorModel: generatorSettings.model,
      solverModel: solverSettings.model,
      ...(judgeSettings ? { judgeModel: judgeSettings.model } : {}),
      k,
      questionsPerChunk,
      minOpenBookPassRate,
      maxClosedBookPassRate,
      concurrency,
      chunking: { maxChars },
      signal: stop.signal,
      onCandidate: (task) => lines.append(synthesizedTaskLine(task)),
      onProgress: ({ chunks, chunksGenerated, decided, kept }) => {
        progress ??= new ProgressBar(chunks, 'synth');
        progress.update(chunksGenerated, `${decided} candidates, ${kept} kept`);
      },
    }));
  } catch (error) {
    if (error instanceof EmptyDocumentError) throw new CliError(error.message, 2);
    throw error;
  } finally {
    stop.dispose();
    progress?.finish();
  }
  const interrupted = stop.received !== undefined;
  const status = interrupted ? 'interrupted' : report.stoppedEarly ? 'failed' : 'completed';
  writeWhole(join(out, 'report.json'), `${JSON.stringify({ status, settings, ...report }, null, 2)}\n`);
  const kept = keptTasks(tasks);
  if (kept.length > 0) {
    writeWhole(
      join(out, 'env.ts'),
      qaEnvironmentFile(kept, {
        name: basename(out).replace(/[^\w.-]+/g, '-') || 'studio-tasks',
        scoring: judge ? 'judge' : 'exact',
        origin: `from ${documents.map((document) => document.name).join(', ')}`,
      }),
    );
  }

  if (json) console.log(JSON.stringify(report));
  else console.log(formatSynthesisReport(report));
  if (kept.length === 0 && report.rejections.malformed > 0) {
    const first = tasks.find((task) => task.rejection === 'malformed')!;
    console.error(
      `no task was kept; ${report.rejections.malformed} generator replies or items could not be read, the first: ${first.reason} (see "raw" in tasks.jsonl; the generator must reply with JSON like [{"question": "...", "answer": "..."}])`,
    );
  }
  console.error(
    `wrote ${lines.count} candidates to ${lines.path}, the report to ${join(out, 'report.json')}${kept.length > 0 ? ` and ${join(out, 'env.ts')} (run it with tabrl eval ${join(out, 'env.ts')})` : '; no task was kept, so there is no env.ts'}`,
  );
  if (interrupted) {
    console.error('interrupted: tasks.jsonl holds every candidate decided so far');
    return stop.exitCode;
  }
  if (report.stoppedEarly) throw new CliError(`stopped: ${report.stoppedEarly}`);
  return 0;
}

/** The synthesis report as a few lines for the terminal. */
function formatSynthesisReport(report: SynthesisReport): string {
  const rate = (value: number | null) => (value === null ? '–' : value.toFixed(3));
  const reasons = Object.entries(report.rejections)
    .filter(([, count]) => count > 0)
    .map(([reason, count]) => `${reason} ${count}`)
    .join(', ');
  return [
    `documents ${report.documents} · chunks ${report.chunks} (${report.chunksGenerated} answered by the generator)`,
    `candidates ${report.candidates}: kept ${report.kept}, rejected ${report.rejected}${reasons ? ` (${reasons})` : ''}`,
    `pass rate of kept tasks: open book ${rate(report.meanOpenBookPassRate)}, closed book ${rate(report.meanClosedBookPassRate)}, grounding gap ${rate(report.groundingGap)}`,
    `calls: generator ${report.calls.generator}, solver ${report.calls.solver}, judge ${report.calls.judge} · ${(report.wallMs / 1000).toFixed(1)} s, ${report.candidatesPerMinute.toFixed(0)} candidates/min`,
  ].join('\n');
}

/** Reads document files (a folder gives its .md, .markdown and .txt files, sorted); a missing path or an empty document is a usage error. */
export function readDocuments(paths: readonly string[]): StudioDocument[] {
  const files = paths.flatMap((path) => {
    if (!existsSync(path)) throw new CliError(`document ${path} does not exist`, 2);
    if (!statSync(path).isDirectory()) return [path];
    const inside = readdirSync(path)
      .filter((name) => /\.(md|markdown|txt)$/i.test(name))
      .sort()
      .map((name) => join(path, name));
    if (inside.length === 0) throw new CliError(`folder ${path} holds no .md or .txt documents`, 2);
    return inside;
  });
  return files.map((file) => {
    const text = readFileSync(file, 'utf8');
    if (text.trim() === '') throw new CliError(`document ${file} is empty: it holds no text to make tasks from`, 2);
    return { name: file, text };
  });
}
