/**
 * `tabrl tasks rows <name | path/to/env.ts> --out rows.jsonl`: one JSON line per task of a split,
 * holding the reset arguments `tabrl serve` takes for it (`task_index`, `split`) and the text of its
 * prompt's last user message (`prompt`), the dataset column trainers such as TRL and verifiers read.
 * A trainer's dataset made of these rows resets each episode on its task. It writes rows only; the
 * server is src/cli/serve.ts.
 */
import { existsSync, writeFileSync } from 'node:fs';
import type { Environment } from '../envs/index.ts';
import { CliError } from './cli-error.ts';
import { integerFlag, jsonObjectFlag, parseFlags } from './flags.ts';
import { closeEnvironment, loadEnvironmentSpec } from './load-environment.ts';

/** Usage text of `tabrl tasks rows`. */
const ROWS_USAGE = `Usage: tabrl tasks rows <name | path/to/env.ts> [--out rows.jsonl] [options]

Writes one JSON line per task: {"task_index": i, "split": "train", "prompt": "<the task's last user
message>"}, the dataset rows of a trainer that plays the environment through tabrl serve (each row's
task_index and split are the reset arguments of its episode; see docs/serve.md).

Options:
  --out FILE              where to write the rows (default: standard output)
  --overwrite             replace FILE when it exists
  --split train|eval      which tasks (default train)
  -n, --num-tasks N       the first N tasks only (default: all)
  --env-args JSON         arguments for the environment's loadEnvironment(args)
  --no-typecheck          run an environment file without type-checking it first`;

/** One dataset row: the reset arguments of a task and its prompt text. */
export interface TaskRow {
  task_index: number;
  split: 'train' | 'eval';
  prompt: string;
}

/** The rows of the first `limit` tasks of a split of `env`. */
export function taskRows(env: Environment, split: 'train' | 'eval', limit = Number.POSITIVE_INFINITY): TaskRow[] {
  const tasks = split === 'train' ? env.dataset : env.evaluationTasks;
  return tasks.slice(0, limit).map((task, index) => ({ task_index: index, split, prompt: env.formatPrompt(task).findLast((message) => message.role === 'user')?.content ?? '' }));
}

/** Runs `tabrl tasks rows`; returns the exit code. */
export async function runTaskRows(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags({
    args: argv,
    allowPositionals: true,
    options: {
      out: { type: 'string' },
      overwrite: { type: 'boolean' },
      split: { type: 'string' },
      'num-tasks': { type: 'string', short: 'n' },
      'env-args': { type: 'string' },
      'no-typecheck': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(ROWS_USAGE);
    return 0;
  }
  const spec = positionals[0];
  if (!spec || positionals.length > 1) throw new CliError(`give exactly one environment (a built-in name or a file path)\n\n${ROWS_USAGE}`, 2);
  const split = values.split ?? 'train';
  if (split !== 'train' && split !== 'eval') throw new CliError(`--split must be train or eval, got "${split}"`, 2);
  const limit = integerFlag(values['num-tasks'], '--num-tasks', Number.MAX_SAFE_INTEGER, 1);
  if (values.out !== undefined && existsSync(values.out) && !values.overwrite) throw new CliError(`${values.out} exists; pass --overwrite to replace it, or choose another --out`, 2);

  const env = await loadEnvironmentSpec(spec, { args: jsonObjectFlag(values['env-args'], '--env-args'), typecheck: !values['no-typecheck'] });
  try {
    const rows = taskRows(env, split, limit);
    if (rows.length === 0) throw new CliError(`${env.name} has no ${split} tasks; check --env-args or --split`);
    const text = rows.map((row) => JSON.stringify(row)).join('\n') + '\n';
    if (values.out === undefined) process.stdout.write(text);
    else {
      writeFileSync(values.out, text);
      console.error(`wrote ${rows.length} ${split} rows of ${env.name} to ${values.out}`);
    }
    return 0;
  } finally {
    closeEnvironment(env);
  }
}
