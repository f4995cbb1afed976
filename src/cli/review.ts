/**
 * `tabrl review`: one review queue over what the studio's checks found (src/envs/studio/review-queue.ts).
 *   build --out DIR [--audit DIR] [--redteam DIR] [--eval RUN_DIR] [--simulate DIR] [--calibration DIR]  → DIR/review.jsonl, ranked
 *   show DIR                                          → the open items, most urgent first
 *   accept DIR ID... [--judge-*]                      → a hack is confirmed and becomes criteria (DIR/criteria.json); a task is kept
 *   reject DIR ID... [--env FILE]                     → a hack is dismissed; a task leaves the environment file FILE
 * Decisions are written back to review.jsonl at once, so the queue survives between sessions.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  buildReviewQueue,
  decideReviewItems,
  mergeCriteria,
  criteriaRubricSnippet,
  JudgeError,
  parseResultsJsonl,
  parseReviewQueue,
  proposeCriteria,
  removeTasksFromEnvironmentFile,
  reviewItemExample,
  reviewQueueJsonl,
  type AuditResult,
  type Criterion,
  type RedTeamReport,
  type ReviewItem,
  type ReviewSources,
  type TaskCalibration,
} from '../envs/studio/index.ts';
import { CliError } from './cli-error.ts';
import { createRoleClient, roleOptions, roleSettingsFromFlags, roleUsage } from './model-roles.ts';
import { parseFlags } from './flags.ts';
import { prepareStudioFolder, writeWhole } from './studio-output.ts';
import { errorMessage } from '../common/error-message.ts';

/** Usage text of `tabrl review`. */
const REVIEW_USAGE = `Usage: tabrl review build --out DIR [--audit DIR] [--redteam DIR] [--eval RUN_DIR] [--simulate DIR] [--calibration DIR]
       tabrl review show DIR
       tabrl review accept DIR ID... [--judge-base-url URL --judge-model NAME]
       tabrl review reject DIR ID... [--env FILE]

One ranked queue of what most needs a person: red-team back doors, rollouts an audit's judge says
did not earn their reward, rollouts a judge panel split on (from tabrl eval --judges), a high reward
against a failed check, other audit flags, simulated tools of low fidelity (from tabrl simulate), and
learnable tasks at the edge of the calibration band.
build writes DIR/review.jsonl; accept and reject write each decision back to it:
  accept a hack   it is confirmed: the judge turns it into yes/no criteria, merged into DIR/criteria.json
                  and DIR/criteria-snippet.ts (gate the reward with them)
  reject a hack   it is dismissed
  accept a task   it stays
  reject a task   it leaves the environment: --env FILE (a file the studio wrote, with its TASKS list)
  accept a tool   its simulation is trusted as it is
  reject a tool   it is marked not to be trusted (record more of its calls, or call the real tool)

Options:
  --out DIR                   (build) the review folder
  --audit DIR                 (build) a tabrl audit folder (audit.json)
  --redteam DIR               (build) a tabrl redteam folder (report.json)
  --eval RUN_DIR              (build) a tabrl eval folder run with --judges (split rollouts)
  --simulate DIR              (build) a tabrl simulate folder (fidelity.json: tools below 80% fidelity)
  --calibration DIR           (build) a tabrl calibrate folder (calibration.jsonl, report.json)
  --overwrite                 (build) replace review.jsonl in --out
  --env FILE                  (reject) the environment file rejected tasks are removed from
${roleUsage(['judge'], 30, { judge: ['(accept) the judge that turns a confirmed hack into criteria'] })}`;

/** Runs `tabrl review`; returns the exit code. */
export async function runReview(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags({
    args: argv,
    allowPositionals: true,
    options: {
      ...roleOptions(['judge']),
      out: { type: 'string' },
      audit: { type: 'string' },
      redteam: { type: 'string' },
      eval: { type: 'string' },
      calibration: { type: 'string' },
      simulate: { type: 'string' },
      overwrite: { type: 'boolean' },
      env: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(REVIEW_USAGE);
    return 0;
  }
  const [verb, dir, ...ids] = positionals;
  if (verb === 'build') {
    if (!values.out) throw new CliError('review build: --out DIR is required (the folder for review.jsonl)', 2);
    const sources: ReviewSources = {
      ...(values.audit ? { audit: readAudit(values.audit) } : {}),
      ...(values.redteam ? { redTeam: readJson<RedTeamReport>(join(values.redteam, 'report.json'), 'a tabrl redteam folder') } : {}),
      ...(values.eval ? { splitRollouts: readSplitRollouts(values.eval) } : {}),
      ...(values.simulate ? { fidelity: readFidelity(values.simulate) } : {}),
      ...(values.calibration ? { calibration: readCalibration(values.calibration) } : {}),
    };
    if (Object.keys(sources).length === 0) throw new CliError('review build: give at least one of --audit, --redteam, --eval, --simulate, --calibration', 2);
    const items = buildReviewQueue(sources);
    prepareStudioFolder(values.out, ['review.jsonl'], values.overwrite === true);
    writeWhole(join(values.out, 'review.jsonl'), reviewQueueJsonl(items));
    printQueue(items);
    console.error(`wrote ${items.length} items to ${join(values.out, 'review.jsonl')}`);
    return 0;
  }
  if (verb !== 'show' && verb !== 'accept' && verb !== 'reject') throw new CliError(`give build, show, accept or reject\n\n${REVIEW_USAGE}`, 2);
  if (!dir) throw new CliError(`review ${verb}: give the review folder (with review.jsonl)`, 2);
  const path = join(dir, 'review.jsonl');
  if (!existsSync(path)) throw new CliError(`${dir} holds no review.jsonl; make one with tabrl review build --out ${dir}`, 2);
  let items: ReviewItem[];
  try {
    items = parseReviewQueue(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new CliError(`${path}: ${errorMessage(error)}`, 2);
  }
  if (verb === 'show') {
    printQueue(items.filter((item) => item.status === 'open'));
    return 0;
  }
  if (ids.length === 0) throw new CliError(`review ${verb}: give the ids of the items (tabrl review show ${dir} lists them)`, 2);
  const status = verb === 'accept' ? 'accepted' : 'rejected';
  let decided: ReturnType<typeof decideReviewItems>;
  try {
    decided = decideReviewItems(items, ids, status);
  } catch (error) {
    throw new CliError(`review: ${errorMessage(error)} (${path}; give an id or a rank from tabrl review show ${dir})`, 2);
  }
  const { chosen } = decided;
  if (verb === 'reject') {
    const tasks = chosen.filter((item) => item.subject === 'task');
    if (tasks.length > 0) {
      if (!values.env) throw new CliError('review reject: a rejected task leaves the environment; give the environment file with --env FILE', 2);
      if (!existsSync(values.env)) throw new CliError(`--env ${values.env} does not exist`, 2);
      let result;
      try {
        result = removeTasksFromEnvironmentFile(
          readFileSync(values.env, 'utf8'),
          tasks.map((item) => item.question),
        );
      } catch (error) {
        throw new CliError(`--env ${values.env}: ${errorMessage(error)}`, 2);
      }
      writeWhole(values.env, result.source);
      console.log(`removed ${result.removed} task${result.removed === 1 ? '' : 's'} from ${values.env}`);
    }
  } else {
    const hacks = chosen.filter((item) => item.subject === 'hack');
    if (hacks.length > 0) {
      const judgeSettings = roleSettingsFromFlags(values, 'judge');
      if (!judgeSettings)
        throw new CliError('review accept: a confirmed hack becomes criteria; give the judge that writes them (--judge-base-url URL --judge-model NAME, or --judge-model heuristic)', 2);
      const judge = await createRoleClient('judge', judgeSettings);
      let proposed: Criterion[];
      try {
        proposed = await proposeCriteria({ judge, judgeModel: judgeSettings.model, examples: hacks.map(reviewItemExample) });
      } catch (error) {
        if (error instanceof JudgeError) throw new CliError(`review accept: the judge failed, nothing was changed: ${error.message}`);
        throw error;
      }
      const criteriaPath = join(dir, 'criteria.json');
      const criteria = mergeCriteria(existsSync(criteriaPath) ? readJson<Criterion[]>(criteriaPath, 'a criteria.json') : [], proposed);
      writeWhole(join(dir, 'criteria.json'), `${JSON.stringify(criteria, null, 2)}\n`);
      writeWhole(join(dir, 'criteria-snippet.ts'), criteriaRubricSnippet(criteria));
      console.log(
        `criteria in ${join(dir, 'criteria.json')} (gate the reward with them; see criteria-snippet.ts):\n${criteria.map((criterion) => `  ${criterion.name}: ${criterion.question}`).join('\n')}`,
      );
    }
  }
  writeWhole(path, reviewQueueJsonl(decided.items));
  console.error(`${status} ${chosen.map((item) => item.id).join(', ')} in ${path}`);
  return 0;
}

function printQueue(items: readonly ReviewItem[]): void {
  if (items.length === 0) console.log('Nothing to review.');
  for (const item of items) console.log(`${String(item.rank).padStart(3)}. ${item.id} [${item.status}] ${item.why.length > 140 ? `${item.why.slice(0, 140)}…` : item.why}`);
}

function readJson<T>(path: string, what: string): T {
  if (!existsSync(path)) throw new CliError(`${path} does not exist; give ${what}`, 2);
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch (error) {
    throw new CliError(`${path}: not JSON (${errorMessage(error)})`, 2);
  }
}

function readAudit(dir: string): NonNullable<ReviewSources['audit']> {
  const result = readJson<AuditResult & { source?: string }>(join(dir, 'audit.json'), 'a tabrl audit folder');
  if (typeof result.source !== 'string' || !existsSync(result.source)) throw new CliError(`${join(dir, 'audit.json')}: the results it audited (${String(result.source)}) are not there any more`, 2);
  return { result: { ...result, reviews: result.reviews ?? [], flagged: result.flagged ?? [] }, rollouts: parseResultsJsonl(readFileSync(result.source, 'utf8')).rollouts };
}

function readSplitRollouts(runDir: string): NonNullable<ReviewSources['splitRollouts']> {
  const metadata = readJson<{ judge_panel?: { split_rollouts?: unknown } }>(join(runDir, 'metadata.json'), 'a tabrl eval folder');
  const ids = metadata.judge_panel?.split_rollouts;
  if (!Array.isArray(ids)) throw new CliError(`${join(runDir, 'metadata.json')} has no judge_panel.split_rollouts: run tabrl eval with --judges FILE`, 2);
  const rollouts = parseResultsJsonl(readFileSync(join(runDir, 'results.jsonl'), 'utf8')).rollouts;
  return rollouts.filter((rollout) => ids.includes(rollout.id)).map((rollout) => ({ id: rollout.id, question: rollout.question, response: rollout.completion, reward: rollout.reward }));
}

function readFidelity(dir: string): NonNullable<ReviewSources['fidelity']> {
  const report = readJson<{ rounds?: unknown }>(join(dir, 'fidelity.json'), 'a tabrl simulate folder');
  const rounds = report.rounds;
  if (!Array.isArray(rounds) || !rounds.every((round: { rows?: unknown } | null) => typeof round === 'object' && round !== null && Array.isArray(round.rows)))
    throw new CliError(`${join(dir, 'fidelity.json')}: "rounds" should be a list of rounds with their rows`, 2);
  if (rounds.length === 0) throw new CliError(`${join(dir, 'fidelity.json')} holds no measured round yet`, 2);
  return { rounds: rounds as NonNullable<ReviewSources['fidelity']>['rounds'] };
}

function readCalibration(dir: string): NonNullable<ReviewSources['calibration']> {
  const report = readJson<{ keep?: unknown }>(join(dir, 'report.json'), 'a tabrl calibrate folder');
  const keep = report.keep;
  if (!Array.isArray(keep) || keep.length !== 2 || !keep.every((value) => typeof value === 'number')) throw new CliError(`${join(dir, 'report.json')}: "keep" should be [lo, hi]`, 2);
  const text = readFileSync(join(dir, 'calibration.jsonl'), 'utf8');
  const tasks = text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as TaskCalibration);
  return { tasks, keep: keep as [number, number] };
}
