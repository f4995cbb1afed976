/**
 * `tabrl tasks from-traces FILE --out DIR`: turns the logs of a deployed agent (OpenAI chat logs,
 * TabRL's or verifiers' results.jsonl) into tasks (src/envs/studio/traces.ts). Writes DIR/tasks.jsonl
 * (one deduplicated prompt per line, with the agent's final answer as its reference; tool calls kept), DIR/report.json
 * (lines, tasks, duplicates, and every skipped line with its number and reason) and DIR/env.ts, an
 * environment over the tasks that a judge grades 0–10 with the original answer as a guide (a tool environment
 * whose tools answer from the recorded calls when the agent used tools). With a judge it also drafts yes/no criteria for review
 * (DIR/criteria.json and DIR/criteria-snippet.ts).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { criteriaRubricSnippet, JudgeError, proposeCriteria, qaEnvironmentFile, simulatedEnvironmentFile, tasksFromTraces, traceTaskLine, type Criterion } from '../envs/studio/index.ts';
import { CliError } from './cli-error.ts';
import { createRoleClient, roleOptions, roleSettingsFromFlags, roleUsage } from './model-roles.ts';
import { integerFlag, numberFlag, parseFlags } from './flags.ts';
import { JsonlAppender, prepareStudioFolder, writeWhole } from './studio-output.ts';
import { runTaskRows } from './task-rows.ts';

/** Usage text of `tabrl tasks`. */
const TASKS_USAGE = `Usage: tabrl tasks from-traces FILE --out DIR [options]

Turns agent logs into tasks. FILE is JSONL, one conversation per line: OpenAI chat-completions logs
({"messages": [...]}, or {"request": {"messages": [...]}, "response": {...}}), or TabRL's or
verifiers' results.jsonl. Each prompt (up to its last user message) becomes one task; repeats are
merged; the agent's final answer (never a tool call) is kept as the reference. Tool calls,
tool_call_ids, the logged "tools" schemas and earlier turns are kept. Lines that cannot be read
(or whose tool messages answer no call) are skipped and listed with their line numbers. env.ts is
an environment over the tasks that a judge grades 0–10 with the reference as a guide: run it with
tabrl eval DIR/env.ts --judge-base-url URL --judge-model NAME. When the agent used tools, env.ts is
a tool environment whose tools answer from the recorded calls (see tabrl simulate for a simulator).

Options:
  --out DIR                   output folder (required): tasks.jsonl, report.json, env.ts
${roleUsage(['judge'], 30, { judge: ['draft yes/no grading criteria from the tasks with this judge', '(criteria.json, criteria-snippet.ts: review them before use)'] })}
  --criteria N                criteria to draft at most (default 5)
  --timeout SECONDS           per-request timeout (default 120)
  --overwrite                 replace the outputs in --out`;

const OUTPUTS = ['tasks.jsonl', 'report.json', 'env.ts', 'criteria.json', 'criteria-snippet.ts'];

/** Runs `tabrl tasks <subcommand>`; returns the exit code. */
export async function runTasks(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === '--help' || sub === '-h') {
    console.log(TASKS_USAGE);
    return sub === undefined ? 2 : 0;
  }
  if (sub === 'rows') return runTaskRows(rest);
  if (sub !== 'from-traces') throw new CliError(`unknown subcommand "${sub}"; the subcommand is from-traces\n\n${TASKS_USAGE}`, 2);
  const { values, positionals } = parseFlags({
    args: rest,
    allowPositionals: true,
    options: { ...roleOptions(['judge']), out: { type: 'string' }, criteria: { type: 'string' }, timeout: { type: 'string' }, overwrite: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help) {
    console.log(TASKS_USAGE);
    return 0;
  }
  const file = positionals[0];
  if (!file || positionals.length > 1) throw new CliError(`give exactly one trace file (JSONL)\n\n${TASKS_USAGE}`, 2);
  if (!values.out) throw new CliError('--out DIR is required (the folder for tasks.jsonl, report.json and env.ts)', 2);
  if (!existsSync(file) || !statSync(file).isFile()) throw new CliError(`trace file ${file} does not exist`, 2);
  const judgeSettings = roleSettingsFromFlags(values, 'judge');
  const maxCriteria = integerFlag(values.criteria, '--criteria', 5, 1);
  const timeoutMs = numberFlag(values.timeout, '--timeout', 120, 0.001, 86_400) * 1000;

  const parsed = tasksFromTraces(readFileSync(file, 'utf8'));
  prepareStudioFolder(values.out, OUTPUTS, values.overwrite === true);
  const out = values.out;
  const lines = new JsonlAppender(join(out, 'tasks.jsonl'));
  for (const task of parsed.tasks) lines.append(traceTaskLine(task));
  const report: Record<string, unknown> = {
    source: file,
    lines: parsed.lines,
    tasks: parsed.tasks.length,
    duplicates: parsed.duplicates,
    skipped: parsed.skipped,
    tools: parsed.tools.map((tool) => tool.function.name),
    toolCalls: parsed.records.length,
    tasksWithoutReference: parsed.tasks.filter((task) => task.info.reference === null).length,
  };
  writeWhole(join(out, 'report.json'), `${JSON.stringify(report, null, 2)}\n`);
  for (const { line, reason } of parsed.skipped.slice(0, 20)) console.error(`${file}:${line}: skipped: ${reason}`);
  if (parsed.skipped.length > 20) console.error(`… and ${parsed.skipped.length - 20} more skipped lines, all listed in ${join(out, 'report.json')}`);
  if (parsed.tasks.length === 0) throw new CliError(`${file}: no line could be read as a conversation (${parsed.lines} lines, ${parsed.skipped.length} skipped; see ${join(out, 'report.json')})`);

  const envTasks = parsed.tasks.map((task) => ({ prompt: task.prompt, answer: task.info.reference ?? '', info: { line: task.info.line } }));
  const usedTools = parsed.tools.length > 0;
  // A log whose agent used tools gives a tool environment: the tools answer from the recorded calls (nearest record).
  const envSource = usedTools
    ? simulatedEnvironmentFile({ name: 'trace-tasks', tasks: envTasks, tools: parsed.tools, records: parsed.records, scoring: 'judge-grade', origin: `from ${file}` })
    : qaEnvironmentFile(envTasks, { name: 'trace-tasks', scoring: 'judge-grade', origin: `from ${file}` });
  writeWhole(join(out, 'env.ts'), envSource);
  console.log(`${parsed.lines} lines → ${parsed.tasks.length} tasks (${parsed.duplicates} duplicates merged, ${parsed.skipped.length} lines skipped)`);
  if (usedTools)
    console.log(
      `tools: ${parsed.tools.map((tool) => tool.function.name).join(', ')} (${parsed.records.length} recorded calls; env.ts answers them from the records, or with tabrl simulate from a simulator model)`,
    );
  console.error(
    `wrote ${join(out, 'tasks.jsonl')}, ${join(out, 'report.json')} and ${join(out, 'env.ts')} (graded by a judge: tabrl eval ${join(out, 'env.ts')} --judge-base-url URL --judge-model NAME ...)`,
  );

  if (judgeSettings) {
    const judge = await createRoleClient('judge', judgeSettings, { timeoutMs });
    let criteria: Criterion[];
    try {
      criteria = await proposeCriteria({
        judge,
        judgeModel: judgeSettings.model,
        purpose: 'tasks',
        max: maxCriteria,
        examples: parsed.tasks.slice(0, 10).map((task) => ({ question: task.question, ...(task.info.reference !== null ? { response: task.info.reference } : {}) })),
      });
    } catch (error) {
      if (error instanceof JudgeError) throw new CliError(`the tasks are written, but drafting criteria failed: ${error.message}`);
      throw error;
    }
    writeWhole(join(out, 'criteria.json'), `${JSON.stringify(criteria, null, 2)}\n`);
    writeWhole(join(out, 'criteria-snippet.ts'), criteriaRubricSnippet(criteria));
    console.log(`drafted ${criteria.length} criteria for review:\n${criteria.map((criterion) => `  ${criterion.name}: ${criterion.question}`).join('\n')}`);
  }
  return 0;
}
