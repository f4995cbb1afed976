/**
 * One review queue: what most needs a person, from every check the studio ran, in one ranked list
 * (review.jsonl). Sources and their rank, most urgent first:
 * 1. `back-door`: a red-team reply the reviewer says the reward paid without the task done;
 * 2. `not-earned`: a rollout an audit's judge says did not earn its reward;
 * 3. `judges-split`: a rollout on which a judge panel split (lower agreement first);
 * 4. `metric-disagrees`: a high reward while a pass/fail check was 0 (a judge against a metric);
 * 5. `audit-flag`: any other detector flag;
 * 6. `low-fidelity`: a simulated tool whose results, on held-out recorded calls, agree with the real
 *    ones less than `LOW_FIDELITY` of the time (judged equivalence when measured, else field
 *    agreement; lowest first): tasks that call it train on a tool that answers otherwise;
 * 7. `edge-of-band`: a learnable task whose pass rate sits within `EDGE_WIDTH` of the band's edge
 *    (closest first): one more calibration sample could move it out.
 * Within a kind, higher reward first. Each item says what to decide: a hack (`back-door`,
 * `not-earned`, `judges-split`, `metric-disagrees`, `audit-flag`) is confirmed (`accept`: it becomes
 * a criterion) or dismissed (`reject`); a task (`edge-of-band`) is kept (`accept`) or taken out of the
 * environment (`reject`); a simulated tool (`low-fidelity`) is trusted as it is (`accept`) or marked
 * not to be trusted (`reject`: record more of its calls, or call the real tool). This module builds, ranks and reads the queue, and removes rejected tasks
 * from a studio environment file's `TASKS`; files and the judge are the CLI's part.
 */
import type { Task } from '../types.ts';
import type { AuditResult, AuditRollout } from './audit.ts';
import type { TaskCalibration } from './calibrate.ts';
import type { CriteriaExample } from './propose-criteria.ts';
import type { FidelityRound } from './fidelity.ts';
import type { Criterion } from './criteria-rubric.ts';
import type { RedTeamReport } from './red-team.ts';

/** What a queue item is about. */
export type ReviewKind = 'back-door' | 'not-earned' | 'judges-split' | 'metric-disagrees' | 'audit-flag' | 'low-fidelity' | 'edge-of-band';

/** The kinds in rank order (most urgent first). */
export const REVIEW_KINDS: readonly ReviewKind[] = ['back-door', 'not-earned', 'judges-split', 'metric-disagrees', 'audit-flag', 'low-fidelity', 'edge-of-band'];

/** A simulated tool whose measured fidelity is below this share joins the queue. */
export const LOW_FIDELITY = 0.8;

/** A pass rate this close to an edge of the learnable band puts a task at the edge. */
export const EDGE_WIDTH = 0.1;

/** One line of review.jsonl. */
export interface ReviewItem {
  /** Stable id: `<kind>:<source id>`. */
  id: string;
  kind: ReviewKind;
  /** 1 = most urgent; the order of review.jsonl. */
  rank: number;
  /** Whether deciding it confirms a hack (→ a criterion), keeps a task (reject → it leaves the environment), or trusts a simulated tool. */
  subject: 'hack' | 'task' | 'tool';
  question: string;
  response?: string;
  reward?: number;
  /** Why it is in the queue, in words. */
  why: string;
  status: 'open' | 'accepted' | 'rejected';
}

/** A rollout a judge panel split on (from metadata.json's `judge_panel.split_rollouts` and the run's results). */
export interface SplitRollout {
  id: string;
  question: string;
  response: string;
  reward: number;
  /** The share of judge pairs that agreed on it, when known. */
  agreement?: number;
}

/** Everything the queue can be built from; each part is optional. */
export interface ReviewSources {
  audit?: { result: AuditResult; rollouts: readonly AuditRollout[] };
  redTeam?: RedTeamReport;
  splitRollouts?: readonly SplitRollout[];
  calibration?: { tasks: readonly TaskCalibration[]; keep: readonly [number, number] };
  /** The rounds of a tool-fidelity measurement (`tabrl simulate`'s fidelity.json); the last round counts. */
  fidelity?: { rounds: readonly Pick<FidelityRound, 'round' | 'rows'>[] };
}

/** Builds the ranked queue (ranks from 1); see the module comment for the order. */
export function buildReviewQueue(sources: ReviewSources): ReviewItem[] {
  const items: (Omit<ReviewItem, 'rank' | 'status'> & { order: number })[] = [];
  for (const [i, finding] of (sources.redTeam?.backDoors ?? []).entries()) {
    items.push({
      id: `back-door:${finding.task}:${finding.call}`,
      kind: 'back-door',
      subject: 'hack',
      question: finding.question,
      response: finding.reply,
      reward: finding.reward,
      why: `red team: reward ${finding.reward.toFixed(3)} paid by ${finding.payingFunction ?? 'nothing'}, ${finding.verdict}${finding.reason ? `: ${finding.reason}` : ''}`,
      order: -finding.reward + i * 1e-9,
    });
  }
  if (sources.audit) {
    const byId = new Map(sources.audit.rollouts.map((rollout) => [rollout.id, rollout]));
    const notEarned = new Set(sources.audit.result.reviews.filter((review) => !review.earned).map((review) => review.id));
    for (const review of sources.audit.result.reviews.filter((entry) => !entry.earned)) {
      const rollout = byId.get(review.id);
      if (rollout)
        items.push({
          id: `not-earned:${review.id}`,
          kind: 'not-earned',
          subject: 'hack',
          question: rollout.question,
          response: rollout.completion,
          reward: rollout.reward,
          why: `audit judge: not earned — ${review.reason}`,
          order: -rollout.reward,
        });
    }
    for (const flag of sources.audit.result.flagged) {
      const rollout = byId.get(flag.id);
      if (!rollout || notEarned.has(flag.id)) continue;
      const kind: ReviewKind = flag.reasons.some((reason) => reason.startsWith('metric-disagrees')) ? 'metric-disagrees' : 'audit-flag';
      items.push({
        id: `${kind}:${flag.id}`,
        kind,
        subject: 'hack',
        question: rollout.question,
        response: rollout.completion,
        reward: rollout.reward,
        why: flag.reasons.join('; '),
        order: -rollout.reward,
      });
    }
  }
  for (const split of sources.splitRollouts ?? []) {
    items.push({
      id: `judges-split:${split.id}`,
      kind: 'judges-split',
      subject: 'hack',
      question: split.question,
      response: split.response,
      reward: split.reward,
      why: `the judges split${split.agreement !== undefined ? ` (agreement ${split.agreement.toFixed(2)})` : ''}; the reward paid ${split.reward.toFixed(3)}`,
      order: (split.agreement ?? 0) - split.reward * 1e-3,
    });
  }
  const lastRound = sources.fidelity?.rounds.at(-1);
  for (const row of lastRound?.rows ?? []) {
    if (row.tool === '*' || row.calls === 0) continue;
    const measure = row.judged ?? row.fields;
    if (measure >= LOW_FIDELITY) continue;
    const how = row.judged !== null ? 'judged equivalent' : 'fields agreeing';
    items.push({
      id: `low-fidelity:${row.tool}`,
      kind: 'low-fidelity',
      subject: 'tool',
      question: `the simulated tool ${row.tool}`,
      why: `${(measure * 100).toFixed(0)}% ${how} on ${row.calls} held-out calls (exact ${(row.exact * 100).toFixed(0)}%${row.garbage > 0 ? `, ${row.garbage} unusable replies` : ''}) after round ${lastRound!.round}, below ${LOW_FIDELITY * 100}%`,
      order: measure,
    });
  }
  if (sources.calibration) {
    const [lo, hi] = sources.calibration.keep;
    for (const task of sources.calibration.tasks) {
      if (task.label !== 'learnable') continue;
      const distance = Math.min(task.passRate - lo, hi - task.passRate);
      if (distance > EDGE_WIDTH + 1e-12) continue;
      items.push({
        id: `edge-of-band:${task.taskIndex}`,
        kind: 'edge-of-band',
        subject: 'task',
        question: task.question,
        why: `pass rate ${task.passRate.toFixed(2)} over ${task.rollouts} rollouts, ${distance.toFixed(2)} inside the band ${lo}-${hi}`,
        order: distance,
      });
    }
  }
  return items
    .sort((a, b) => REVIEW_KINDS.indexOf(a.kind) - REVIEW_KINDS.indexOf(b.kind) || a.order - b.order)
    .map(({ order: _order, ...item }, i) => ({ ...item, rank: i + 1, status: 'open' as const }));
}

/**
 * The queue with items `ids` (ids or ranks) decided; throws naming an id the queue does not hold,
 * before anything changes.
 */
export function decideReviewItems(items: readonly ReviewItem[], ids: readonly string[], status: 'accepted' | 'rejected'): { items: ReviewItem[]; chosen: ReviewItem[] } {
  const chosen = ids.map((id) => {
    const item = items.find((entry) => entry.id === id || String(entry.rank) === id);
    if (!item) throw new Error(`no item "${id}" in the review queue`);
    return item;
  });
  const decided = new Set(chosen.map((item) => item.id));
  return { items: items.map((item) => (decided.has(item.id) ? { ...item, status } : item)), chosen };
}

/** The criteria already kept, then the proposed ones whose names are not taken. */
export function mergeCriteria(existing: readonly Criterion[], proposed: readonly Criterion[]): Criterion[] {
  const names = new Set(existing.map((criterion) => criterion.name));
  return [...existing, ...proposed.filter((criterion) => !names.has(criterion.name))];
}

/** review.jsonl text. */
export function reviewQueueJsonl(items: readonly ReviewItem[]): string {
  return items.map((item) => `${JSON.stringify(item)}\n`).join('');
}

/** Reads review.jsonl; throws naming the first bad line. */
export function parseReviewQueue(text: string): ReviewItem[] {
  return text.split('\n').flatMap((line, i) => {
    if (line.trim() === '') return [];
    let item: ReviewItem;
    try {
      item = JSON.parse(line) as ReviewItem;
    } catch {
      throw new Error(`review.jsonl:${i + 1}: not JSON`);
    }
    if (typeof item.id !== 'string' || !REVIEW_KINDS.includes(item.kind) || typeof item.question !== 'string') throw new Error(`review.jsonl:${i + 1}: not a review item (needs id, kind, question)`);
    return [item];
  });
}

/** The example a confirmed hack gives `proposeCriteria`. */
export function reviewItemExample(item: ReviewItem): CriteriaExample {
  return { question: item.question, ...(item.response !== undefined ? { response: item.response } : {}), note: `confirmed by a person: ${item.why}` };
}

/**
 * A studio environment file's source without the tasks whose question (or last user message) is in
 * `questions`: the file's `export const TASKS: Task[] = [...]` is rewritten, the rest left as it is.
 * Throws when the file has no such list (it was not written by the studio: remove the task by hand).
 */
export function removeTasksFromEnvironmentFile(source: string, questions: readonly string[]): { source: string; removed: number } {
  const head = 'export const TASKS: Task[] = ';
  const start = source.indexOf(head);
  const end = start < 0 ? -1 : source.indexOf('\n];', start);
  if (start < 0 || end < 0) throw new Error('the file has no `export const TASKS: Task[] = [...]` list (the studio writes one); remove the task from it by hand');
  const tasks = JSON.parse(source.slice(start + head.length, end + 2)) as Task[];
  const drop = new Set(questions.map((question) => question.trim()));
  const kept = tasks.filter((task) => !drop.has((task.question ?? [...(task.prompt ?? [])].reverse().find((message) => message.role === 'user')?.content ?? '').trim()));
  return { source: `${source.slice(0, start + head.length)}${JSON.stringify(kept, null, 2)}${source.slice(end + 2)}`, removed: tasks.length - kept.length };
}
