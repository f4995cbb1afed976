/**
 * Which flags of `tabrl eval --resume DIR` conflict with the run's saved settings. A person reruns the
 * command they started with and adds `--resume`: a flag whose value equals the saved one is accepted,
 * and each one that differs is named with both values, so nothing silently changes mid-run. This
 * module reads and parses flags only; it runs and writes nothing.
 */
import { isDeepStrictEqual } from 'node:util';
import { resolve } from 'node:path';
import { integerFlag, jsonObjectFlag, numberFlag } from './flags.ts';
import { judgeSettingsFromFlags, type JudgeSettings } from './judge.ts';
import { readJudgePanelFile, type JudgePanelSettings } from './judge-panel-file.ts';
import type { RoleSettings } from './model-roles.ts';
import { simulatorSettingsFromFlags } from './simulator-role.ts';
import { isEnvironmentPath } from './load-environment.ts';
import { parseBackendName } from './open-model.ts';

/** The saved settings of an evaluation (metadata.json) that the command's flags set. */
interface ResumableEvalSettings {
  environment: string;
  environment_name: string;
  env_args: Record<string, unknown>;
  model: string;
  base_url: string | null;
  backend?: string;
  num_tasks: number;
  rollouts_per_task: number;
  sampling_args: { max_tokens?: number; temperature?: number; top_p?: number; seed?: number };
  concurrency: number;
  judge?: JudgeSettings;
  judge_panel?: JudgePanelSettings;
  simulator?: RoleSettings;
  state_columns?: string[];
}

/** The `tabrl eval` flag values a resume compares (undefined where the flag was not given). */
type EvalFlagValues = Partial<
  Record<
    | 'base-url'
    | 'model'
    | 'backend'
    | 'num-tasks'
    | 'rollouts-per-task'
    | 'max-tokens'
    | 'temperature'
    | 'top-p'
    | 'seed'
    | 'concurrency'
    | 'env-args'
    | 'out'
    | 'judge-base-url'
    | 'judge-model'
    | 'judge-api-key-env'
    | 'judges'
    | 'simulator-base-url'
    | 'simulator-model'
    | 'simulator-api-key-env'
    | 'state-columns',
    string
  >
> & {
  overwrite?: boolean;
};

/**
 * One line per given flag (or environment) that differs from `saved`, e.g. `--num-tasks 20 (the run
 * has 10)`; empty when every given value is the saved one. `parseStateColumns` is eval's own parser.
 */
export function conflictingResumeFlags(
  values: EvalFlagValues,
  positionals: readonly string[],
  saved: ResumableEvalSettings,
  resumeDir: string,
  parseStateColumns: (text: string) => string[],
): string[] {
  const conflicts: string[] = [];
  const check = (flag: keyof EvalFlagValues, same: (value: string) => boolean, savedText: string) => {
    const value = values[flag];
    if (typeof value === 'string' && !same(value)) conflicts.push(`--${flag} ${value} (the run has ${savedText})`);
  };
  const shown = (value: unknown) => (value === undefined || value === null ? 'none' : typeof value === 'string' ? value : JSON.stringify(value));

  for (const spec of positionals) {
    const same = spec === saved.environment_name || spec === saved.environment || (isEnvironmentPath(spec) && resolve(spec) === saved.environment);
    if (!same || positionals.length > 1) conflicts.push(`${spec} (the run evaluates ${saved.environment_name})`);
  }
  check('model', (value) => value === saved.model, saved.model);
  check('base-url', (value) => value === saved.base_url, shown(saved.base_url));
  check('backend', (value) => parseBackendName(value) === saved.backend, shown(saved.backend));
  check('num-tasks', (value) => integerFlag(value, '--num-tasks', 0, 1) === saved.num_tasks, String(saved.num_tasks));
  check('rollouts-per-task', (value) => integerFlag(value, '--rollouts-per-task', 0, 1) === saved.rollouts_per_task, String(saved.rollouts_per_task));
  check('max-tokens', (value) => integerFlag(value, '--max-tokens', 0, 1) === saved.sampling_args.max_tokens, shown(saved.sampling_args.max_tokens));
  check('temperature', (value) => numberFlag(value, '--temperature', undefined, 0, 10) === saved.sampling_args.temperature, shown(saved.sampling_args.temperature));
  check('top-p', (value) => numberFlag(value, '--top-p', undefined, 0, 1) === saved.sampling_args.top_p, shown(saved.sampling_args.top_p));
  check('seed', (value) => integerFlag(value, '--seed', 0, 0) === saved.sampling_args.seed, shown(saved.sampling_args.seed));
  check('concurrency', (value) => integerFlag(value, '--concurrency', 0, 1) === saved.concurrency, String(saved.concurrency));
  check('env-args', (value) => isDeepStrictEqual(jsonObjectFlag(value, '--env-args'), saved.env_args), JSON.stringify(saved.env_args));
  check('out', (value) => resolve(value) === resolve(resumeDir), resumeDir);
  check('state-columns', (value) => isDeepStrictEqual(parseStateColumns(value), saved.state_columns ?? []), shown(saved.state_columns?.join(',')));
  if (values['judge-base-url'] !== undefined || values['judge-model'] !== undefined || values['judge-api-key-env'] !== undefined) {
    const judge = judgeSettingsFromFlags(values);
    if (!isDeepStrictEqual(judge, saved.judge)) conflicts.push(`the judge flags (the run's judge is ${saved.judge ? `${saved.judge.model} at ${saved.judge.baseUrl}` : 'none'})`);
  }
  if (values['simulator-base-url'] !== undefined || values['simulator-model'] !== undefined || values['simulator-api-key-env'] !== undefined) {
    const simulator = simulatorSettingsFromFlags(values);
    if (!isDeepStrictEqual(simulator, saved.simulator))
      conflicts.push(`the simulator flags (the run's simulator is ${saved.simulator ? `${saved.simulator.model}${saved.simulator.baseUrl ? ` at ${saved.simulator.baseUrl}` : ''}` : 'none'})`);
  }
  if (values.judges !== undefined) {
    const panel = readJudgePanelFile(values.judges);
    const savedPanel = saved.judge_panel ? { aggregation: saved.judge_panel.aggregation, judges: saved.judge_panel.judges } : undefined;
    if (!isDeepStrictEqual(panel, savedPanel))
      conflicts.push(`--judges ${values.judges} (the run's panel is ${savedPanel ? `${savedPanel.aggregation} of ${savedPanel.judges.map((judge) => judge.name).join(', ')}` : 'none'})`);
  }
  if (values.overwrite === true) conflicts.push('--overwrite (it would delete the run being resumed)');
  return conflicts;
}
