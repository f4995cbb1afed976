/**
 * `tabrl simulate TRACES --simulator-base-url URL --simulator-model NAME --out DIR`: simulated tools
 * from an agent's traces (src/envs/studio: traces.ts, tool-simulator.ts, fidelity.ts). Holds out a
 * seeded share of the recorded calls, measures how faithfully the simulator answers them from the
 * rest (DIR/fidelity.json, a row per tool, written after every round), refines the simulator's
 * prompt with its worst pool answers for `--rounds R`, and writes DIR/env.ts: the traces' tasks with
 * the simulated tools, usable by eval, train and calibrate (and audit of their results). Also DIR/tasks.jsonl and
 * DIR/records.jsonl (every recorded call, marked held out or not) and DIR/tools.json (the schemas), which
 * `tabrl synth --backwards DIR` reads. Exit code 0 when it finished, 1
 * when the simulator or judge failed (the rounds done are in fidelity.json), 2 for a usage mistake.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  JudgeError,
  refineSimulator,
  simulatedEnvironmentFile,
  SimulatorError,
  splitHeldOut,
  tasksFromTraces,
  traceTaskLine,
  type FidelityRound,
  type FidelityRow,
  type SimulatorCorrection,
} from '../envs/studio/index.ts';
import { CliError } from './cli-error.ts';
import { errorMessage } from '../common/error-message.ts';
import { createRoleClient, roleOptions, roleSettingsFromFlags, roleUsage } from './model-roles.ts';
import { integerFlag, numberFlag, parseFlags } from './flags.ts';
import { JsonlAppender, prepareStudioFolder, writeWhole } from './studio-output.ts';

/** Usage text of `tabrl simulate`. */
const SIMULATE_USAGE = `Usage: tabrl simulate TRACES --simulator-base-url URL --simulator-model NAME --out DIR [options]

Simulates the tools an agent called in its traces (JSONL, the formats of tabrl tasks from-traces),
for tools you cannot call in training. Each simulated call prompts the simulator with the tool's
schema and the recorded calls of the same tool closest to it; the same call gets the same result
in an episode and across a group of rollouts. A seeded share of the recorded calls is held out and
simulated from the rest: fidelity.json has, per tool, the share answered exactly, the share of JSON
fields that agree, and (with a judge) the share judged equivalent.

Models:
${roleUsage(['simulator'], 30, {}, { local: false }, { simulator: ['its model name, or heuristic (offline: the scripted simulator, which answers', 'with the nearest recorded call shown in its prompt)'] })}
${roleUsage(['judge'], 30, { judge: ['judge whether a simulated result is equivalent to the real one'] }, { local: false, heuristic: false })}

Options:
  --out DIR                   output folder (required): fidelity.json, env.ts, tasks.jsonl,
                              records.jsonl, tools.json (tabrl synth --backwards DIR reads them)
  --rounds R                  measure R times, adding the simulator's worst answers on the
                              pool to its prompt after each round (default 1)
  --held-out SHARE            share of each tool's recorded calls held out (default 0.25)
  --examples K                recorded calls shown per simulated call (default 4)
  --seed N                    seed of the held-out split and the simulator's calls (default 0)
  --timeout SECONDS           per-request timeout (default 120)
  --overwrite                 replace the outputs in --out

env.ts answers the tools with the simulator tabrl lends it (tabrl eval DIR/env.ts --simulator-base-url
URL --simulator-model NAME --judge-base-url URL --judge-model NAME ...: the judge grades the answers);
without a lent simulator, after --simulator-model heuristic (or with --env-args '{"simulator": "scripted"}'),
by nearest-record retrieval, offline.`;

const OUTPUTS = ['fidelity.json', 'env.ts', 'tasks.jsonl', 'records.jsonl', 'tools.json'];

/** Runs `tabrl simulate`; returns the exit code. */
export async function runSimulate(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags({
    args: argv,
    allowPositionals: true,
    options: {
      ...roleOptions(['simulator', 'judge']),
      out: { type: 'string' },
      rounds: { type: 'string' },
      'held-out': { type: 'string' },
      examples: { type: 'string' },
      seed: { type: 'string' },
      timeout: { type: 'string' },
      overwrite: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(SIMULATE_USAGE);
    return 0;
  }
  const file = positionals[0];
  if (!file || positionals.length > 1) throw new CliError(`give exactly one trace file (JSONL)\n\n${SIMULATE_USAGE}`, 2);
  if (!values.out) throw new CliError('--out DIR is required (the folder for fidelity.json and env.ts)', 2);
  if (!existsSync(file) || !statSync(file).isFile()) throw new CliError(`trace file ${file} does not exist`, 2);
  const simulatorSettings = roleSettingsFromFlags(values, 'simulator', { required: true, allowLocal: false, purpose: '(the model that simulates the tools)' })!;
  const judgeSettings = roleSettingsFromFlags(values, 'judge', { allowLocal: false, allowHeuristic: false });
  const rounds = integerFlag(values.rounds, '--rounds', 1, 1);
  const heldOutShare = numberFlag(values['held-out'], '--held-out', 0.25, 0, 0.9);
  const examples = integerFlag(values.examples, '--examples', 4, 1);
  const seed = integerFlag(values.seed, '--seed', 0, 0);
  const timeoutMs = numberFlag(values.timeout, '--timeout', 120, 0.001, 86_400) * 1000;

  const parsed = tasksFromTraces(readFileSync(file, 'utf8'));
  for (const { line, reason } of parsed.skipped.slice(0, 20)) console.error(`${file}:${line}: skipped: ${reason}`);
  if (parsed.skipped.length > 20) console.error(`… and ${parsed.skipped.length - 20} more skipped lines`);
  if (parsed.records.length === 0) {
    throw new CliError(
      `${file}: no tool call with a result was found (${parsed.lines} lines, ${parsed.skipped.length} skipped); simulate needs traces whose assistant messages have tool_calls answered by tool messages with their tool_call_id`,
      2,
    );
  }
  prepareStudioFolder(values.out, OUTPUTS, values.overwrite === true);
  const out = values.out;
  const tasksFile = new JsonlAppender(join(out, 'tasks.jsonl'));
  for (const task of parsed.tasks) tasksFile.append(traceTaskLine(task));
  const split = splitHeldOut(parsed.records, heldOutShare, seed);
  const heldOut = new Set(split.heldOut);
  writeWhole(join(out, 'tools.json'), `${JSON.stringify(parsed.tools, null, 2)}\n`);
  const recordsFile = new JsonlAppender(join(out, 'records.jsonl'));
  for (const record of parsed.records) recordsFile.append(`${JSON.stringify({ ...record, heldOut: heldOut.has(record) })}\n`);

  const scripted = simulatorSettings.model === 'heuristic';
  const client = await createRoleClient('simulator', simulatorSettings, { timeoutMs });
  const judge = judgeSettings ? { client: await createRoleClient('judge', judgeSettings, { timeoutMs }), model: judgeSettings.model } : undefined;
  const settings = { source: file, simulator: simulatorSettings, ...(judgeSettings ? { judge: judgeSettings } : {}), rounds, heldOutShare, examples, seed };
  const counts = { lines: parsed.lines, skipped: parsed.skipped.length, tasks: parsed.tasks.length, records: parsed.records.length, pool: split.pool.length, heldOut: split.heldOut.length };
  const done: Omit<FidelityRound, 'examples'>[] = [];
  let corrections: SimulatorCorrection[] = [];
  const writeReport = (status: string, error?: string) =>
    writeWhole(join(out, 'fidelity.json'), `${JSON.stringify({ status, ...(error ? { error } : {}), settings, ...counts, rounds: done, corrections }, null, 2)}\n`);
  writeReport('running');
  if (split.heldOut.length === 0)
    console.error(`no recorded call could be held out (a tool needs two recorded calls, and --held-out above 0), so fidelity is not measured; env.ts is written all the same`);
  try {
    if (split.heldOut.length > 0) {
      const onRound = (round: FidelityRound, used: readonly SimulatorCorrection[]) => {
        const { examples: _examples, ...row } = round;
        done.push(row);
        corrections = [...used];
        writeReport('running');
        console.log(formatRound(round));
      };
      ({ corrections } = await refineSimulator(split, { tools: parsed.tools, client, model: simulatorSettings.model, ...(judge ? { judge } : {}), examples, seed, rounds, onRound }));
    }
  } catch (error) {
    if (error instanceof SimulatorError || error instanceof JudgeError) {
      writeReport('failed', error.message);
      throw new CliError(`${error.message} (the ${done.length} round(s) measured are in ${join(out, 'fidelity.json')}; env.ts was not written)`);
    }
    writeReport('failed', errorMessage(error));
    throw error;
  }
  writeReport('completed');
  const envTasks = parsed.tasks.map((task) => ({ prompt: task.prompt, answer: task.info.reference ?? '', info: { line: task.info.line } }));
  writeWhole(
    join(out, 'env.ts'),
    simulatedEnvironmentFile({
      name: 'simulated-tools',
      tasks: envTasks,
      tools: parsed.tools,
      records: parsed.records,
      corrections,
      scoring: 'judge-grade',
      origin: `from ${file}`,
      defaultSimulator: scripted ? 'scripted' : 'simulator',
    }),
  );
  console.error(`wrote ${join(out, 'fidelity.json')}, ${join(out, 'env.ts')}, tasks.jsonl, records.jsonl and tools.json (${split.pool.length} calls in the pool, ${split.heldOut.length} held out)`);
  return 0;
}

const percent = (share: number | null) => (share === null ? '   —' : `${(share * 100).toFixed(0).padStart(3)}%`);

/** A round as a table: one row per tool and the overall row. */
function formatRound(round: FidelityRound): string {
  const row = (r: FidelityRow) =>
    `  ${r.tool.padEnd(22)} ${String(r.calls).padStart(5)}  ${percent(r.exact)}  ${percent(r.fields)}  ${percent(r.judged)}${r.garbage > 0 ? `  (${r.garbage} garbage)` : ''}`;
  return [
    `round ${round.round} (${round.corrections} corrections in the prompt)`,
    `  ${'tool'.padEnd(22)} calls  exact  fields  judged`,
    ...round.rows.map(row),
    row({ ...round.overall, tool: 'all tools' }),
  ].join('\n');
}
