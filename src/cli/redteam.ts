/**
 * `tabrl redteam ENV --attacker-* --out DIR`: red-teams an environment's reward before training on
 * it (src/envs/studio/red-team.ts). Writes DIR/candidates.jsonl as replies are scored (so a failed
 * run keeps them), then DIR/report.json with `backDoors` and, with a reviewer and back doors, proposed
 * criteria (DIR/criteria.json, DIR/criteria-snippet.ts) to gate the reward with, as `tabrl audit` does.
 * Exit code 0 when the search finished (back doors or not), 1 when a model failed, 2 for a usage
 * mistake.
 */
import { join } from 'node:path';
import { criteriaRubricSnippet, formatRedTeamReport, JudgeError, proposeCriteria, redTeam, redTeamCriteriaExamples, RedTeamError } from '../envs/studio/index.ts';
import { CliError } from './cli-error.ts';
import { createJudgeClient, judgeSettingsFromFlags } from './judge.ts';
import { closeEnvironment, loadEnvironmentSpec } from './load-environment.ts';
import { createRoleClient, roleOptions, roleSettingsFromFlags, roleUsage } from './model-roles.ts';
import { integerFlag, jsonObjectFlag, numberFlag, parseFlags } from './flags.ts';
import { JsonlAppender, prepareStudioFolder, writeWhole } from './studio-output.ts';

/** Usage text of `tabrl redteam`. */
const REDTEAM_USAGE = `Usage: tabrl redteam ENV --attacker-base-url URL --attacker-model NAME --out DIR [options]

Searches for back doors in an environment's reward before training: an attacker proposes replies,
each is scored by the environment's own rubric (a real rollout), the best are kept and mutated for
--rounds rounds; then a reviewer says in hindsight whether each high-scoring reply earned its
reward. ENV is a built-in name or an environment file. Writes candidates.jsonl and report.json
(backDoors: reply, reward, the function that paid, the verdict); with a reviewer and back doors,
proposed criteria too (criteria.json, criteria-snippet.ts) to gate the reward with.

Models:
${roleUsage(['attacker'], 30, {}, { local: true, heuristic: true }, { attacker: ['its model name, or local:tiny / local:<model-dir>, or heuristic (an offline', 'random search: blind edits, kept when they pay)'] })}
${roleUsage(['reviewer'], 30, { reviewer: ["the hindsight reviewer (best another model than the environment's judge);", 'without one, every high-scoring reply is listed as unreviewed'] })}
${roleUsage(['judge'], 30, { judge: ["the environment's judge endpoint, lent as args.judgeClient (as in tabrl eval)"] }, { local: false, heuristic: false })}

Options:
  --out DIR                   output folder (required)
  --rounds R                  search rounds per task (default 10)
  --population P              replies per round (default 4); the budget is P + (R − 1) × (P − ⌈P/2⌉) attacker calls per task
  -n, --num-tasks N           tasks attacked, from the start of the evaluation set (default 1)
  --high-reward X             a reward at or above X is high (default: the environment's pass threshold)
  --task TEXT                 what the task asks, in words, for the attacker and the reviewer
  --env-args JSON             arguments for the environment's loadEnvironment(args)
  --seed S                    seed of the heuristic attacker (default 0)
  --no-criteria               do not propose criteria
  --timeout SECONDS           per-request timeout (default 120)
  --overwrite                 replace the outputs in --out`;

const OUTPUTS = ['candidates.jsonl', 'report.json', 'criteria.json', 'criteria-snippet.ts'];

/** Runs `tabrl redteam`; returns the exit code. */
export async function runRedteam(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags({
    args: argv,
    allowPositionals: true,
    options: {
      ...roleOptions(['attacker', 'reviewer', 'judge']),
      out: { type: 'string' },
      rounds: { type: 'string' },
      population: { type: 'string' },
      'num-tasks': { type: 'string', short: 'n' },
      'high-reward': { type: 'string' },
      task: { type: 'string' },
      'env-args': { type: 'string' },
      seed: { type: 'string' },
      'no-criteria': { type: 'boolean' },
      timeout: { type: 'string' },
      overwrite: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(REDTEAM_USAGE);
    return 0;
  }
  const spec = positionals[0];
  if (!spec || positionals.length > 1) throw new CliError(`give exactly one environment (a built-in name or a file path)\n\n${REDTEAM_USAGE}`, 2);
  if (!values.out) throw new CliError('--out DIR is required (the folder for report.json)', 2);
  const attackerSettings = roleSettingsFromFlags(values, 'attacker', { required: true, purpose: '(the model that searches for back doors)' })!;
  const reviewerSettings = roleSettingsFromFlags(values, 'reviewer');
  const judgeSettings = judgeSettingsFromFlags(values);
  const rounds = integerFlag(values.rounds, '--rounds', 10, 1);
  const population = integerFlag(values.population, '--population', 4, 1);
  const numTasks = integerFlag(values['num-tasks'], '--num-tasks', 1, 1);
  const highReward = numberFlag(values['high-reward'], '--high-reward', undefined, -1e9, 1e9);
  const seed = integerFlag(values.seed, '--seed', 0, 0);
  const timeoutMs = numberFlag(values.timeout, '--timeout', 120, 0.001, 86_400) * 1000;
  const envArgs = jsonObjectFlag(values['env-args'], '--env-args');

  prepareStudioFolder(values.out, OUTPUTS, values.overwrite === true);
  const out = values.out;
  const attacker = await createRoleClient('attacker', attackerSettings, { timeoutMs, seed });
  const reviewer = reviewerSettings ? await createRoleClient('reviewer', reviewerSettings, { timeoutMs }) : undefined;
  const judge = judgeSettings ? { client: createJudgeClient(judgeSettings, timeoutMs), model: judgeSettings.model } : undefined;
  const env = await loadEnvironmentSpec(spec, { args: envArgs, ...(judge ? { judge } : {}) });
  const candidates = new JsonlAppender(join(out, 'candidates.jsonl'));
  let report;
  try {
    report = await redTeam(env, {
      attacker,
      attackerModel: attackerSettings.model,
      ...(reviewer ? { reviewer, reviewerModel: reviewerSettings!.model } : {}),
      rounds,
      population,
      numTasks,
      ...(highReward !== undefined ? { highReward } : {}),
      ...(values.task ? { taskDescription: values.task } : {}),
      onCandidate: (candidate) => candidates.append(`${JSON.stringify(candidate)}\n`),
    });
  } catch (error) {
    if (error instanceof RedTeamError) throw new CliError(`stopped: ${error.message} (the ${candidates.count} replies scored so far are in ${candidates.path})`);
    throw error;
  } finally {
    closeEnvironment(env);
  }
  const settings = {
    environment: spec,
    env_args: envArgs,
    attacker: attackerSettings,
    ...(reviewerSettings ? { reviewer: reviewerSettings } : {}),
    ...(judgeSettings ? { judge: judgeSettings } : {}),
  };
  writeWhole(join(out, 'report.json'), `${JSON.stringify({ status: 'completed', ...settings, ...report }, null, 2)}\n`);
  process.stdout.write(formatRedTeamReport(report));
  console.error(`wrote ${join(out, 'report.json')} and ${candidates.path}`);

  const examples = redTeamCriteriaExamples(report);
  if (reviewer && !values['no-criteria'] && examples.length > 0 && report.backDoors.some((finding) => finding.verdict === 'not earned')) {
    try {
      const criteria = await proposeCriteria({ judge: reviewer, judgeModel: reviewerSettings!.model, examples, ...(values.task ? { taskDescription: values.task } : {}) });
      writeWhole(join(out, 'criteria.json'), `${JSON.stringify(criteria, null, 2)}\n`);
      writeWhole(join(out, 'criteria-snippet.ts'), criteriaRubricSnippet(criteria));
      console.log(
        `\nProposed criteria (review them, then gate the reward with them; see ${join(out, 'criteria-snippet.ts')}):\n${criteria.map((criterion) => `  ${criterion.name}: ${criterion.question}`).join('\n')}`,
      );
    } catch (error) {
      if (error instanceof JudgeError) throw new CliError(`the report is written, but proposing criteria failed: ${error.message}`);
      throw error;
    }
  }
  return 0;
}
