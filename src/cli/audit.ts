/**
 * `tabrl audit RUN_DIR | results.jsonl --out DIR`: a reward-hack audit of finished rollouts
 * (src/envs/studio/audit.ts). Writes DIR/audit.json — first with the detectors' findings, then again
 * after each judge review, so a failing judge loses nothing — and DIR/audit.md, a short readable
 * report. With a judge and rollouts it says did not earn their reward, it also proposes yes/no criteria for review
 * (DIR/criteria.json, DIR/criteria-snippet.ts). Exit code 1 when the judge failed (the detectors'
 * findings are written), 2 for a usage mistake.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { METRIC_KINDS, type MetricKind } from '../envs/index.ts';
import { audit, auditCriteriaExamples, criteriaRubricSnippet, formatAuditReport, JudgeError, parseResultsJsonl, proposeCriteria, type AuditResult, type AuditReview } from '../envs/studio/index.ts';
import { CliError } from './cli-error.ts';
import { createRoleClient, roleOptions, roleSettingsFromFlags, roleUsage } from './model-roles.ts';
import { integerFlag, jsonObjectFlag, numberFlag, parseFlags } from './flags.ts';
import { prepareStudioFolder, writeWhole } from './studio-output.ts';

/** Usage text of `tabrl audit`. */
const AUDIT_USAGE = `Usage: tabrl audit <RUN_DIR | results.jsonl> --out DIR [--judge-base-url URL --judge-model NAME] [options]

Looks for reward hacking in finished rollouts (an evaluation folder from tabrl eval, or any
results.jsonl): cheap detectors (one reward dominating, reward rising while a metric-only check
falls, length drift, identical completions across tasks, format rewards without correct content, a
high reward while a weight-0 metric is 0), then a judge's hindsight review of the top-scoring and a
random sample of rollouts. Writes audit.json and audit.md; with a judge, proposed criteria too.

Options:
  --out DIR                   output folder (required)
${roleUsage(['judge'], 30, { judge: ['the hindsight judge (without one, only the detectors run)'] })}
  --task TEXT                 what the task asks, in words, for the judge
  --rubric TEXT               how the reward is computed, in words, for the judge
  --weights JSON              weights of the reward functions by name, e.g. '{"judgeReward": 1, "twoLinesMetric": 0}'
                              (default: the run's metadata.json, else names containing "metric" weigh 0, the others 1)
  --metrics JSON              what each weight-0 score means: check (pass/fail, the default), higherIsBetter,
                              lowerIsBetter or info, e.g. '{"invalidGuessesMetric": "lowerIsBetter"}'
                              (default: the run's metadata.json, where tabrl eval records the rubric's)
  --top N                     top-scoring rollouts the judge reads (default 5)
  --random N                  random other rollouts the judge reads (default 5)
  --seed S                    seed of the random sample (default 0)
  --no-criteria               do not propose criteria
  --timeout SECONDS           per-request timeout (default 120)
  --overwrite                 replace the outputs in --out`;

const OUTPUTS = ['audit.json', 'audit.md', 'criteria.json', 'criteria-snippet.ts'];

/** Runs `tabrl audit`; returns the exit code. */
export async function runAudit(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags({
    args: argv,
    allowPositionals: true,
    options: {
      ...roleOptions(['judge']),
      out: { type: 'string' },
      task: { type: 'string' },
      rubric: { type: 'string' },
      weights: { type: 'string' },
      metrics: { type: 'string' },
      top: { type: 'string' },
      random: { type: 'string' },
      seed: { type: 'string' },
      'no-criteria': { type: 'boolean' },
      timeout: { type: 'string' },
      overwrite: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(AUDIT_USAGE);
    return 0;
  }
  const source = positionals[0];
  if (!source || positionals.length > 1) throw new CliError(`give exactly one run folder or results.jsonl\n\n${AUDIT_USAGE}`, 2);
  if (!values.out) throw new CliError('--out DIR is required (the folder for audit.json and audit.md)', 2);
  const judgeSettings = roleSettingsFromFlags(values, 'judge');
  const givenWeights = parseWeights(values.weights);
  const givenMetrics = parseMetricKinds(values.metrics, '--metrics');
  const timeoutMs = numberFlag(values.timeout, '--timeout', 120, 0.001, 86_400) * 1000;
  const top = integerFlag(values.top, '--top', 5, 0);
  const random = integerFlag(values.random, '--random', 5, 0);
  const seed = integerFlag(values.seed, '--seed', 0, 0);

  const { path, metadata } = locateResults(source);
  const { rollouts, skipped } = parseResultsJsonl(readFileSync(path, 'utf8'));
  for (const { line, reason } of skipped.slice(0, 20)) console.error(`${path}:${line}: skipped: ${reason}`);
  if (rollouts.length === 0) throw new CliError(`${path} holds no rollouts to audit (${skipped.length} lines skipped)`);
  prepareStudioFolder(values.out, OUTPUTS, values.overwrite === true);
  const out = values.out;
  const taskDescription = values.task ?? (typeof metadata?.environment_name === 'string' ? `the tasks of the environment "${metadata.environment_name}"` : undefined);
  const weights = givenWeights ?? recordedWeights(metadata);
  const metrics = givenMetrics ?? (isPlainObject(metadata?.metric_kinds) ? parseMetricKinds(metadata.metric_kinds, 'metadata.json: metric_kinds', true) : undefined);
  const base = { source: path, skipped_lines: skipped };
  const save = (result: AuditResult, status: string) => {
    writeWhole(join(out, 'audit.json'), `${JSON.stringify({ status, ...base, ...result }, null, 2)}\n`);
    writeWhole(join(out, 'audit.md'), formatAuditReport(result));
  };

  const options = {
    ...(weights ? { weights } : {}),
    ...(metrics ? { metrics } : {}),
    ...(taskDescription ? { taskDescription } : {}),
    ...(values.rubric ? { rubricDescription: values.rubric } : {}),
    top,
    random,
    seed,
  };
  // The detectors first: written before any judge call, so a failing judge loses nothing.
  const detectorsOnly = await audit(rollouts, options);
  save(detectorsOnly, judgeSettings ? 'reviewing' : 'completed');
  let result = detectorsOnly;
  if (judgeSettings) {
    const judge = await createRoleClient('judge', judgeSettings, { timeoutMs });
    const reviews: AuditReview[] = [];
    result = await audit(rollouts, {
      ...options,
      judge,
      judgeModel: judgeSettings.model,
      onReview: (review) => {
        reviews.push(review);
        save({ ...detectorsOnly, reviews: [...reviews] }, 'reviewing');
      },
    });
    save(result, result.stoppedEarly ? 'failed' : 'completed');
  }
  process.stdout.write(formatAuditReport(result));
  console.error(`wrote ${join(out, 'audit.json')} and ${join(out, 'audit.md')}`);
  if (result.stoppedEarly) throw new CliError(`stopped: ${result.stoppedEarly} (the detectors' findings and ${result.reviews.length} reviews are written)`);

  if (judgeSettings && !values['no-criteria']) {
    // Only what the judge said was not earned: a detector's flag alone (a short right answer shared by many tasks) proposes nothing.
    const examples = auditCriteriaExamples(result, rollouts);
    if (examples.length === 0) console.log('\nNo criteria proposed: the judge found every reviewed reward earned.');
    else {
      try {
        const judge = await createRoleClient('judge', judgeSettings, { timeoutMs });
        const criteria = await proposeCriteria({ judge, judgeModel: judgeSettings.model, examples, ...(taskDescription ? { taskDescription } : {}) });
        writeWhole(join(out, 'criteria.json'), `${JSON.stringify(criteria, null, 2)}\n`);
        writeWhole(join(out, 'criteria-snippet.ts'), criteriaRubricSnippet(criteria));
        console.log(
          `\nProposed criteria (review them, then add them as a criteria judge; see ${join(out, 'criteria-snippet.ts')}):\n${criteria.map((criterion) => `  ${criterion.name}: ${criterion.question}`).join('\n')}`,
        );
      } catch (error) {
        if (error instanceof JudgeError) throw new CliError(`the audit is written, but proposing criteria failed: ${error.message}`);
        throw error;
      }
    }
  }
  return 0;
}

/** results.jsonl of a run folder (with its metadata.json, when there is one), or the file itself. */
function locateResults(source: string): { path: string; metadata?: Record<string, unknown> } {
  if (!existsSync(source)) throw new CliError(`${source} does not exist; give a run folder (with results.jsonl) or a results.jsonl file`, 2);
  if (!statSync(source).isDirectory()) return { path: source };
  const path = join(source, 'results.jsonl');
  if (!existsSync(path)) throw new CliError(`${source} holds no results.jsonl; give an evaluation folder from tabrl eval or a results.jsonl file`, 2);
  const metadataPath = join(source, 'metadata.json');
  try {
    return { path, ...(existsSync(metadataPath) ? { metadata: JSON.parse(readFileSync(metadataPath, 'utf8')) as Record<string, unknown> } : {}) };
  } catch {
    return { path };
  }
}

function parseWeights(text: string | undefined): Record<string, number> | undefined {
  if (text === undefined) return undefined;
  const value = jsonObjectFlag(text, '--weights');
  for (const [name, weight] of Object.entries(value))
    if (typeof weight !== 'number' || !Number.isFinite(weight)) throw new CliError(`--weights: the weight of ${name} must be a number, got ${JSON.stringify(weight)}`, 2);
  return value as Record<string, number>;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Metric kinds from the --metrics flag (a mistake is a usage error) or from metadata.json (`lenient`: a bad entry is skipped with a warning). */
function parseMetricKinds(source: unknown, label: string, lenient = false): Record<string, MetricKind> | undefined {
  if (source === undefined) return undefined;
  const value = typeof source === 'string' ? jsonObjectFlag(source, label) : (source as Record<string, unknown>);
  const kinds: Record<string, MetricKind> = {};
  for (const [name, kind] of Object.entries(value)) {
    if (METRIC_KINDS.includes(kind as MetricKind)) kinds[name] = kind as MetricKind;
    else if (lenient) console.error(`${label}: ignoring ${name}: ${JSON.stringify(kind)} is not one of ${METRIC_KINDS.join(', ')}`);
    else throw new CliError(`${label}: the kind of ${name} must be one of ${METRIC_KINDS.join(', ')}, got ${JSON.stringify(kind)}`, 2);
  }
  return kinds;
}

/** The reward weights tabrl eval recorded in metadata.json, when they are there and well formed. */
function recordedWeights(metadata: Record<string, unknown> | undefined): Record<string, number> | undefined {
  const weights = metadata?.reward_weights;
  if (!isPlainObject(weights)) return undefined;
  return Object.values(weights).every((weight) => typeof weight === 'number' && Number.isFinite(weight)) ? (weights as Record<string, number>) : undefined;
}
