/**
 * `tabrl synth --backwards SOURCE --simulator-model NAME --solver-model NAME --out DIR`: tasks planted
 * backwards in a simulated backend (src/envs/studio/planting.ts, backwards.ts): a planted field, a
 * record reached by a sequence of calls, or a state reached by a write (--kinds), with questions
 * from templates or written by a generator model (--generator-*). SOURCE is a trace file (JSONL) or
 * a `tabrl simulate` folder (its tools.json, records.jsonl and the corrections in fidelity.json).
 * Writes DIR/tasks.jsonl (every planted task with its pass rates, kept or rejected and why),
 * DIR/report.json and DIR/env.ts over the kept tasks, rewarded by exact match with the planted
 * answer or, for a write, by the state the episode reached.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type ToolSchema } from '../envs/index.ts';
import {
  HeuristicToolSolverClient,
  PLANT_KINDS,
  plantBackwardsTasks,
  plantedEnvironmentTask,
  simulatedEnvironmentFile,
  tasksFromTraces,
  verifyBackwardsTasks,
  writePlantedQuestions,
  type PlantKind,
  type SimulatorCorrection,
  type ToolRecord,
} from '../envs/studio/index.ts';
import { CliError } from './cli-error.ts';
import { errorMessage } from '../common/error-message.ts';
import { createRoleClient, roleOptions, roleSettingsFromFlags, roleUsage } from './model-roles.ts';
import { integerFlag, numberFlag, parseFlags } from './flags.ts';
import { JsonlAppender, prepareStudioFolder, writeWhole } from './studio-output.ts';

/** Usage text of `tabrl synth --backwards`. */
const BACKWARDS_USAGE = `Usage: tabrl synth --backwards SOURCE --simulator-model NAME --solver-model NAME --out DIR [options]

Plants tasks backwards in a simulated backend: the end state first, then the task. Kinds:
  field  a new call (argument values no recorded call used) whose result holds a planted value in
         one field; the task asks for it
  chain  a record reached by a sequence of calls: a listing tool's new entry names a new id, whose
         record (read by another tool) holds the planted value; the task names only the entry
  write  a state reached by a write (a tool named set_/update_/reschedule_/...): the task asks for
         a change to a planted entity; the reward checks the state the episode reached
The reward checks the planted answer or the reached state. SOURCE is a trace file
(JSONL) or a tabrl simulate folder. The solver tries each task k times with the simulated tools
and k times without tools: a task it passes without tools is rejected (answerable-without-tools),
and so is one it cannot solve with them (unsolved-with-tools).

Models:
${roleUsage(['simulator'], 30, { simulator: ['simulates the calls other than the planted one'] }, { local: false }, { simulator: ['its model name, or heuristic (the scripted nearest-record simulator)'] })}
${roleUsage(['generator'], 30, { generator: ['writes each question from the planted end state (optional; without it,', 'template questions)'] }, { local: false })}
${roleUsage(['solver'], 30, { solver: ['the model that must find the planted answer'] }, {}, { solver: ['its model name, local:tiny / local:<model-dir>, or heuristic (a rule that', 'calls the tool the question names and reads the field it asks for)'] })}

Options:
  --out DIR                   output folder (required): tasks.jsonl, report.json, env.ts
  --tasks N                   tasks to plant (default 8)
  --kinds LIST                kinds to plant, taking turns (default field,chain,write)
  -k N                        attempts with tools and without, per task (default 4)
  --max-closed-book RATE      reject a task passed without tools more often than this (default 0)
  --min-with-tools RATE       reject a task passed with tools less often than this (default 0.5)
  --seed N                    seed of the planting (default 0)
  --timeout SECONDS           per-request timeout (default 120)
  --overwrite                 replace the outputs in --out`;

const OUTPUTS = ['tasks.jsonl', 'report.json', 'env.ts'];

/** Runs `tabrl synth --backwards`; returns the exit code. */
export async function runSynthBackwards(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags({
    args: argv,
    allowPositionals: true,
    options: {
      ...roleOptions(['simulator', 'solver', 'generator']),
      kinds: { type: 'string' },
      backwards: { type: 'boolean' },
      out: { type: 'string' },
      tasks: { type: 'string' },
      k: { type: 'string', short: 'k' },
      'max-closed-book': { type: 'string' },
      'min-with-tools': { type: 'string' },
      seed: { type: 'string' },
      timeout: { type: 'string' },
      overwrite: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(BACKWARDS_USAGE);
    return 0;
  }
  const source = positionals[0];
  if (!source || positionals.length > 1) throw new CliError(`give exactly one source: a trace file (JSONL) or a tabrl simulate folder\n\n${BACKWARDS_USAGE}`, 2);
  if (!values.out) throw new CliError('--out DIR is required (the folder for tasks.jsonl, report.json and env.ts)', 2);
  if (!existsSync(source)) throw new CliError(`${source} does not exist; give a trace file (JSONL) or a tabrl simulate folder`, 2);
  const simulatorSettings = roleSettingsFromFlags(values, 'simulator', { required: true, allowLocal: false, purpose: '(the model that simulates the tools)' })!;
  const solverSettings = roleSettingsFromFlags(values, 'solver', { required: true, purpose: '(the model that must find the planted answer)' })!;
  const generatorSettings = roleSettingsFromFlags(values, 'generator', { allowLocal: false, allowHeuristic: false });
  const kinds = parseKinds(values.kinds);
  const count = integerFlag(values.tasks, '--tasks', 8, 1);
  const k = integerFlag(values.k, '-k', 4, 1);
  const maxClosedBookPassRate = numberFlag(values['max-closed-book'], '--max-closed-book', 0, 0, 1);
  const minToolPassRate = numberFlag(values['min-with-tools'], '--min-with-tools', 0.5, 0, 1);
  const seed = integerFlag(values.seed, '--seed', 0, 0);
  const timeoutMs = numberFlag(values.timeout, '--timeout', 120, 0.001, 86_400) * 1000;

  const { tools, records, corrections } = readSource(source);
  const templated = plantBackwardsTasks(records, count, seed, kinds);
  if (templated.length === 0)
    throw new CliError(
      `${source}: nothing of the kinds ${kinds.join(', ')} can be planted: no recorded result is a JSON object with a text or number field to plant${kinds.includes('field') ? '' : ", no listing names another tool's argument, and no write tool (set_/update_/reschedule_/...) was recorded"} (${records.length} recorded calls of ${tools.map((tool) => tool.function.name).join(', ')})`,
      2,
    );
  prepareStudioFolder(values.out, OUTPUTS, values.overwrite === true);
  const out = values.out;
  const simulator = await createRoleClient('simulator', simulatorSettings, { timeoutMs });
  const solver = solverSettings.model === 'heuristic' ? new HeuristicToolSolverClient() : await createRoleClient('solver', solverSettings, { timeoutMs });
  const settings = {
    source,
    simulator: simulatorSettings,
    solver: solverSettings,
    ...(generatorSettings ? { generator: generatorSettings } : {}),
    kinds,
    tasks: count,
    k,
    maxClosedBookPassRate,
    minToolPassRate,
    seed,
  };
  writeWhole(join(out, 'report.json'), `${JSON.stringify({ status: 'running', settings, planted: templated.length }, null, 2)}\n`);
  let planted = templated;
  let verified;
  try {
    if (generatorSettings) {
      const written = await writePlantedQuestions(templated, { generator: await createRoleClient('generator', generatorSettings, { timeoutMs }), generatorModel: generatorSettings.model, tools });
      for (const { task, refused } of written) if (refused) console.error(`planted task ${task.id}: kept the template question (${refused})`);
      planted = written.map((item) => item.task);
    }
    verified = await verifyBackwardsTasks(planted, {
      tools,
      records,
      corrections,
      simulator,
      simulatorModel: simulatorSettings.model,
      solver,
      solverModel: solverSettings.model,
      k,
      maxClosedBookPassRate,
      minToolPassRate,
    });
  } catch (error) {
    writeWhole(join(out, 'report.json'), `${JSON.stringify({ status: 'failed', error: errorMessage(error), settings, planted: templated.length }, null, 2)}\n`);
    throw new CliError(`${errorMessage(error)} (nothing was kept; see ${join(out, 'report.json')})`);
  }
  const lines = new JsonlAppender(join(out, 'tasks.jsonl'));
  for (const task of verified) lines.append(`${JSON.stringify(task)}\n`);
  const kept = verified.filter((task) => task.kept);
  const mean = (list: number[]) => (list.length === 0 ? null : list.reduce((sum, value) => sum + value, 0) / list.length);
  const report = {
    status: 'completed',
    settings,
    planted: verified.length,
    kinds: Object.fromEntries(kinds.map((kind) => [kind, { planted: verified.filter((task) => task.kind === kind).length, kept: kept.filter((task) => task.kind === kind).length }])),
    ...(generatorSettings ? { generatorQuestions: verified.filter((task) => task.questionSource === 'generator').length } : {}),
    kept: kept.length,
    rejections: {
      'answerable-without-tools': verified.filter((task) => task.rejection === 'answerable-without-tools').length,
      'unsolved-with-tools': verified.filter((task) => task.rejection === 'unsolved-with-tools').length,
    },
    keptToolPassRate: mean(kept.map((task) => task.toolPassRate)),
    keptClosedBookPassRate: mean(kept.map((task) => task.closedBookPassRate)),
  };
  writeWhole(join(out, 'report.json'), `${JSON.stringify(report, null, 2)}\n`);
  console.log(
    `kinds: ${kinds.map((kind) => `${kind} ${report.kinds[kind]!.kept}/${report.kinds[kind]!.planted} kept`).join(', ')}${generatorSettings ? `; questions by the generator: ${report.generatorQuestions} of ${verified.length}` : ''}`,
  );
  console.log(
    `planted ${verified.length} tasks: kept ${kept.length}, answerable without tools ${report.rejections['answerable-without-tools']}, unsolved with tools ${report.rejections['unsolved-with-tools']}`,
  );
  if (kept.length > 0) {
    console.log(`pass rate of kept tasks: with tools ${report.keptToolPassRate!.toFixed(3)}, without tools ${report.keptClosedBookPassRate!.toFixed(3)}`);
    writeWhole(
      join(out, 'env.ts'),
      simulatedEnvironmentFile({
        name: 'planted-tasks',
        tasks: kept.map(plantedEnvironmentTask),
        tools,
        records,
        corrections,
        scoring: 'exact',
        origin: `planted backwards from ${source}`,
        defaultSimulator: simulatorSettings.model === 'heuristic' ? 'scripted' : 'simulator',
      }),
    );
    console.error(
      `wrote ${join(out, 'tasks.jsonl')}, ${join(out, 'report.json')} and ${join(out, 'env.ts')} (run it with tabrl eval ${join(out, 'env.ts')}${simulatorSettings.model === 'heuristic' ? '' : ' --simulator-base-url URL --simulator-model NAME'})`,
    );
  } else {
    console.error(`no task was kept, so no env.ts was written; every planted task is in ${join(out, 'tasks.jsonl')} with its pass rates`);
  }
  return 0;
}

/** The --kinds list: field, chain and write, comma-separated (default all three). */
function parseKinds(text: string | undefined): PlantKind[] {
  if (text === undefined) return [...PLANT_KINDS];
  const kinds = text
    .split(',')
    .map((kind) => kind.trim())
    .filter((kind) => kind !== '');
  const unknown = kinds.filter((kind) => !(PLANT_KINDS as readonly string[]).includes(kind));
  if (kinds.length === 0 || unknown.length > 0) throw new CliError(`--kinds ${text}: give one or more of ${PLANT_KINDS.join(', ')}, comma-separated`, 2);
  return [...new Set(kinds)] as PlantKind[];
}

/** The tools, recorded calls and corrections of a trace file or a tabrl simulate folder. */
function readSource(source: string): { tools: ToolSchema[]; records: ToolRecord[]; corrections: SimulatorCorrection[] } {
  if (statSync(source).isDirectory()) {
    const file = (name: string) => {
      const path = join(source, name);
      if (!existsSync(path)) throw new CliError(`${source} is not a tabrl simulate folder: it has no ${name}; give the --out folder of tabrl simulate, or a trace file`, 2);
      return readFileSync(path, 'utf8');
    };
    try {
      const tools = JSON.parse(file('tools.json')) as ToolSchema[];
      const records = file('records.jsonl')
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as ToolRecord);
      const fidelity = existsSync(join(source, 'fidelity.json')) ? (JSON.parse(file('fidelity.json')) as { corrections?: SimulatorCorrection[] }) : {};
      return { tools, records: records.map(({ tool, arguments: args, result }) => ({ tool, arguments: args, result })), corrections: fidelity.corrections ?? [] };
    } catch (error) {
      if (error instanceof CliError) throw error;
      throw new CliError(`${source}: a file of the simulate folder cannot be read (${errorMessage(error)}); run tabrl simulate again`, 2);
    }
  }
  const parsed = tasksFromTraces(readFileSync(source, 'utf8'));
  for (const { line, reason } of parsed.skipped.slice(0, 20)) console.error(`${source}:${line}: skipped: ${reason}`);
  if (parsed.records.length === 0)
    throw new CliError(`${source}: no tool call with a result was found (${parsed.lines} lines, ${parsed.skipped.length} skipped); planting needs traces of an agent that used tools`, 2);
  return { tools: parsed.tools, records: parsed.records, corrections: [] };
}
