/**
 * The review queue's actions: one ranked queue (`buildReviewQueue`, as `tabrl review build` makes
 * it) from what the studio found this session — the red team's back doors, the audit's judge
 * reviews and flags, the rollouts a judge panel split on, the simulated tools of low fidelity,
 * the calibrated tasks at the edge of the band — and each decision written back as `tabrl review accept|reject` does: a confirmed hack
 * becomes criteria (the judge proposes them; the environment reopens with them gating its reward),
 * a rejected task leaves the environment (its `TASKS` list is rewritten and the file reopens); a
 * simulated tool is trusted or marked not to be.
 */
import { usePlayground } from '../../store/index.ts';
import {
  buildReviewQueue,
  decideReviewItems,
  mergeCriteria,
  proposeCriteria,
  removeTasksFromEnvironmentFile,
  reviewItemExample,
  type AuditRollout,
  type ReviewItem,
  type ReviewSources,
} from '../../../envs/studio/index.ts';
import { errorMessage } from '../../../common/error-message.ts';
import { currentEnvironment } from '../environment/current-environment.ts';
import { environmentModel } from '../environment/editor-models.ts';
import { addEnvironment } from '../environment/environment-actions.ts';
import { judgeLabel } from '../judge/judge-actions.ts';
import { openEnvironmentWithCriteria } from './criteria-actions.ts';
import { auditSubject, roleClient } from './studio-actions.ts';
import { type ReviewState, type StudioState, type StudioUpdate } from './studio-slice.ts';

const studio = {
  getState: () => usePlayground.getState().studio,
  setState: (update: StudioUpdate) => usePlayground.getState().setStudio(update),
};

function setReview(update: Partial<ReviewState>): void {
  studio.setState((state) => ({ review: { ...state.review, ...update } }));
}

/** What the studio's state holds for the queue: each source present only when its job finished with results. */
function reviewSourcesOf(state: Pick<StudioState, 'audit' | 'redTeam' | 'judgePanel' | 'calibration' | 'keep' | 'toolSimulation'>, auditRollouts: () => readonly AuditRollout[]): ReviewSources {
  const split = state.judgePanel.rollouts.filter((rollout) => rollout.split);
  return {
    ...(state.audit.result ? { audit: { result: state.audit.result, rollouts: auditRollouts() } } : {}),
    ...(state.redTeam.report ? { redTeam: state.redTeam.report } : {}),
    ...(split.length > 0 ? { splitRollouts: split.map(({ id, question, response, reward, agreement }) => ({ id, question, response, reward, ...(agreement !== null ? { agreement } : {}) })) } : {}),
    ...(state.calibration.tasks.length > 0 ? { calibration: { tasks: state.calibration.tasks, keep: state.keep } } : {}),
    ...(state.toolSimulation.rounds.length > 0 ? { fidelity: { rounds: state.toolSimulation.rounds } } : {}),
  };
}

/** Builds the queue from the studio's results; decisions already taken on items still in it are kept. */
export function buildStudioReviewQueue(): void {
  const state = studio.getState();
  const sources = reviewSourcesOf(state, () => auditSubject().rollouts);
  if (Object.keys(sources).length === 0) {
    setReview({ items: [], error: 'Nothing to review yet: run an audit, a red team, a judge panel, a calibration or a tool-fidelity measurement first; what they find lands here.', note: null });
    return;
  }
  const decided = new Map(state.review.items.filter((item) => item.status !== 'open').map((item) => [item.id, item.status]));
  setReview({ items: buildReviewQueue(sources).map((item) => ({ ...item, status: decided.get(item.id) ?? item.status })), error: null, note: null });
}

/** Accepts item `id`: a hack is confirmed and becomes criteria gating the environment's reward; a task is kept. */
export async function acceptReviewItem(id: string): Promise<void> {
  await decide(id, 'accepted', async (item) => {
    if (item.subject === 'tool') return `Trusted ${item.question} as it simulates now.`;
    if (item.subject === 'task') return `Kept the task "${short(item.question)}".`;
    const judge = await roleClient('judge', 'judge');
    let proposed;
    try {
      proposed = await proposeCriteria({ judge: judge.client, judgeModel: judge.model, examples: [reviewItemExample(item)] });
    } catch (error) {
      throw new Error(`the judge (${judgeLabel()}) failed, nothing was changed: ${errorMessage(error)}`);
    }
    const criteria = mergeCriteria(studio.getState().review.criteria, proposed);
    const outcome = await openEnvironmentWithCriteria(criteria);
    if (!outcome.opened) throw new Error(outcome.note + (outcome.snippet ? `\n${outcome.snippet}` : ''));
    setReview({ criteria });
    return outcome.note;
  });
}

/** Rejects item `id`: a hack is dismissed; a task leaves the open environment (a studio file with its TASKS list). */
export async function rejectReviewItem(id: string): Promise<void> {
  await decide(id, 'rejected', async (item) => {
    if (item.subject === 'hack') return `Dismissed ${item.id}.`;
    if (item.subject === 'tool') return `Marked ${item.question} as not to be trusted: record more of its calls (or call the real tool) before training on tasks that use it.`;
    const saved = currentEnvironment();
    if (!saved) throw new Error('Open the environment the task belongs to first.');
    const { source, removed } = removeTasksFromEnvironmentFile(environmentModel(saved.id, saved.source).getValue(), [item.question]);
    if (removed === 0) throw new Error(`"${saved.name}" has no task "${short(item.question)}": open the environment that was calibrated.`);
    const name = saved.name.endsWith(' (reviewed)') ? saved.name : `${saved.name} (reviewed)`;
    await addEnvironment({ name, source, ...(saved.builtin ? { builtin: saved.builtin } : {}) });
    return `Removed the task "${short(item.question)}": opened "${name}" without it.`;
  });
}

/** Runs a decision's effect; the item's status changes only when the effect succeeded. */
async function decide(id: string, status: 'accepted' | 'rejected', effect: (item: ReviewItem) => Promise<string>): Promise<void> {
  const { items, busy } = studio.getState().review;
  if (busy) return;
  setReview({ busy: id, error: null, note: null });
  try {
    const { items: next, chosen } = decideReviewItems(items, [id], status);
    const note = await effect(chosen[0]!);
    setReview({ items: next, note });
  } catch (error) {
    setReview({ error: errorMessage(error) });
  } finally {
    setReview({ busy: null });
  }
}

function short(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 80 ? `${flat.slice(0, 80)}…` : flat;
}
