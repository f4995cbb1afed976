/**
 * The red team's actions: who attacks and who reviews, the budget (rounds × population), and the
 * search itself — `redTeamTarget` from src/envs/studio (the search `tabrl redteam` runs) against the
 * open environment loaded in a sandbox, each reply scored by a real rollout of its first evaluation
 * task with the Judge card's judge lent as in an evaluation. "Turn into criteria" asks the judge for
 * criteria that would catch the back doors and opens the environment with them.
 */
import { usePlayground } from '../../store/index.ts';
import { type ChatClient } from '../../../envs/index.ts';
import { HeuristicAttackerClient, proposeCriteria, redTeamCriteriaExamples, redTeamTarget } from '../../../envs/studio/index.ts';
import { errorMessage } from '../../../common/error-message.ts';
import type { SandboxSession } from '../../../workers/sandbox-bridge.ts';
import { actionState } from '../../store/action-state.ts';
import { buildJudge, judgeLabel } from '../judge/judge-actions.ts';
import { openEnvironmentWithCriteria } from './criteria-actions.ts';
import { roleClient } from './studio-actions.ts';
import { ReplyClient, sandboxRedTeamTarget } from './sandbox-red-team-target.ts';
import { openStudioSandbox } from './studio-sandbox.ts';
import { type RedTeamState, type StudioRoleSource, type StudioUpdate } from './studio-slice.ts';

const studio = {
  getState: () => usePlayground.getState().studio,
  setState: (update: StudioUpdate) => usePlayground.getState().setStudio(update),
};
const jobs = actionState(() => ({ redTeam: undefined as AbortController | undefined }));

function setRedTeam(update: Partial<RedTeamState>): void {
  studio.setState((state) => ({ redTeam: { ...state.redTeam, ...update } }));
}

/** The attacker: the offline heuristic attacker (seed 0), or a model from the Policy or Judge card. */
async function attackerClient(source: StudioRoleSource): Promise<{ client: ChatClient; model: string }> {
  if (source === 'heuristic') return { client: new HeuristicAttackerClient(0), model: 'heuristic-attacker' };
  return roleClient(source, 'judge');
}

/** Chooses who attacks. */
export function setAttacker(attacker: StudioRoleSource): void {
  studio.setState({ attacker });
}

/** Chooses who reviews. */
export function setReviewer(reviewer: StudioRoleSource | 'none'): void {
  studio.setState({ reviewer });
}

/** Sets the search budget: rounds per task and replies per round (each at least 1). */
export function setRedTeamBudget(budget: { rounds?: number; population?: number }): void {
  const clamp = (value: number) => Math.max(1, Math.min(100, Math.round(value) || 1));
  studio.setState((state) => ({ redTeamRounds: clamp(budget.rounds ?? state.redTeamRounds), redTeamPopulation: clamp(budget.population ?? state.redTeamPopulation) }));
}

/** Red-teams the open environment's reward on its first evaluation task. */
export async function startRedTeam(): Promise<void> {
  if (studio.getState().redTeam.status === 'running') return;
  const { attacker, reviewer, redTeamRounds: rounds, redTeamPopulation: population } = studio.getState();
  const controller = new AbortController();
  jobs.redTeam = controller;
  setRedTeam({ status: 'running', scored: 0, report: null, error: null, criteriaNote: null, criteriaSnippet: null });
  let session: SandboxSession | undefined;
  try {
    const attack = await attackerClient(attacker);
    const review = reviewer === 'none' ? undefined : await roleClient(reviewer, 'judge');
    const policy = new ReplyClient();
    const judge = await buildJudge();
    const opened = await openStudioSandbox({ client: policy, ...(judge ? { judge } : {}), signal: controller.signal });
    session = opened.session;
    const onStop = () => session?.stop();
    controller.signal.addEventListener('abort', onStop, { once: true });
    const report = await redTeamTarget(sandboxRedTeamTarget(session, policy, opened.environment), {
      attacker: attack.client,
      attackerModel: attack.model,
      ...(review ? { reviewer: review.client, reviewerModel: review.model } : {}),
      rounds,
      population,
      numTasks: 1,
      signal: controller.signal,
      onCandidate: () => setRedTeam({ scored: studio.getState().redTeam.scored + 1 }),
    });
    controller.signal.removeEventListener('abort', onStop);
    setRedTeam({ status: controller.signal.aborted ? 'cancelled' : 'done', report });
  } catch (error) {
    setRedTeam({
      status: controller.signal.aborted ? 'cancelled' : 'failed',
      error: controller.signal.aborted ? null : errorMessage(error).replace(/--attacker-base-url and --attacker-model/, 'the card the attacker comes from'),
    });
  } finally {
    session?.dispose();
    jobs.redTeam = undefined;
  }
}

/** Stops the search. */
export function cancelRedTeam(): void {
  jobs.redTeam?.abort();
}

/** Asks the judge (Judge card; the offline heuristic judge by default) for criteria that would catch the back doors, and opens the environment with them. */
export async function redTeamToCriteria(): Promise<boolean> {
  const report = studio.getState().redTeam.report;
  const examples = report ? redTeamCriteriaExamples(report) : [];
  if (examples.length === 0) return false;
  setRedTeam({ criteriaNote: 'Asking the judge for criteria…', criteriaSnippet: null });
  try {
    const judge = await roleClient('judge', 'judge');
    const criteria = await proposeCriteria({ judge: judge.client, judgeModel: judge.model, examples, purpose: 'failures' });
    const outcome = await openEnvironmentWithCriteria(criteria);
    setRedTeam({ criteriaNote: outcome.note, criteriaSnippet: outcome.snippet });
    return outcome.opened;
  } catch (error) {
    setRedTeam({ criteriaNote: `Proposing criteria failed (${judgeLabel()}): ${errorMessage(error)}`, criteriaSnippet: null });
    return false;
  }
}
