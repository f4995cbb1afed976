/**
 * Tasks planted backwards as environment tasks, and their verification. Planting (planting.ts)
 * picks the end state first — a planted record, a record reached by a sequence of calls, or a
 * state reached by a write — and writes the task from it; the reward checks the planted answer
 * (exact match) or the state the episode reached (planted-goal.ts), so it is verifiable without
 * production labels. `verifyBackwardsTasks` runs a solver k times with the simulated tools and k
 * times without any tool (the closed-book test, for tools): a task the solver passes without a
 * tool is rejected, and so is one it cannot solve with them. Verification calls the solver.
 */
import type { ChatClient } from '../client.ts';
import { evaluate } from '../evaluate.ts';
import { Rubric, type RewardContext } from '../rubric.ts';
import { SingleTurnEnv } from '../singleturn-env.ts';
import type { Task, ToolSchema } from '../types.ts';
import { completionText } from '../messages.ts';
import { answersMatch } from './answer-match.ts';
import { SimulatedToolEnv } from './simulated-tool-env.ts';
import type { ToolRecord } from './tool-records.ts';
import { ToolSimulator, type SimulatorCorrection } from './tool-simulator.ts';
import type { PlantedTask } from './planting.ts';
import { plantedGoalOf, reachedStateReward } from './planted-goal.ts';

/** The system prompt of a planted task: the tools are the only source of the answer. */
export const PLANTED_SYSTEM_PROMPT = 'You are an agent with tools. Use them to look up what you need, then reply with the value alone.';

/** A planted task as an environment task: the question with the tools' system prompt, the answer (none for a write), the planted records and any goal in info. */
export function plantedEnvironmentTask(task: PlantedTask): Task {
  const prompt: Task['prompt'] = [
    { role: 'system', content: PLANTED_SYSTEM_PROMPT },
    { role: 'user', content: task.question },
  ];
  const info = { planted: task.records, field: task.field, plantedId: task.id, kind: task.kind, ...(task.goal ? { goal: task.goal } : {}) };
  return task.goal ? { prompt, info } : { prompt, answer: task.answer, info };
}

/** A planted task with the solver's pass rates and the verdict. */
export interface VerifiedPlantedTask extends PlantedTask {
  /** Share of the solver's k attempts with the simulated tools that gave the planted answer. */
  toolPassRate: number;
  /** Share of its k attempts without any tool that did (the closed-book test). */
  closedBookPassRate: number;
  kept: boolean;
  rejection: 'answerable-without-tools' | 'unsolved-with-tools' | null;
}

/** What verification needs. */
export interface VerifyBackwardsOptions {
  tools: readonly ToolSchema[];
  records: readonly ToolRecord[];
  corrections?: readonly SimulatorCorrection[];
  /** The simulator model for calls other than the planted one. */
  simulator: ChatClient;
  simulatorModel?: string;
  solver: ChatClient;
  solverModel?: string;
  k: number;
  /** Reject a task passed without tools more often than this (default 0). */
  maxClosedBookPassRate?: number;
  /** Reject a task passed with tools less often than this (default 0.5). */
  minToolPassRate?: number;
  signal?: AbortSignal;
}

/** For a task with a goal, whether the state reached it; otherwise 1 when the reply's final answer matches the planted one after normalisation. */
function plantedOutcomeReward(ctx: RewardContext): number {
  if (plantedGoalOf(ctx.info)) return reachedStateReward(ctx);
  return answersMatch(completionText(ctx.completion), ctx.answer ?? '') ? 1 : 0;
}

/** Runs the closed-book test and the with-tools test on every planted task; see the module comment. */
export async function verifyBackwardsTasks(tasks: readonly PlantedTask[], options: VerifyBackwardsOptions): Promise<VerifiedPlantedTask[]> {
  if (tasks.length === 0) return [];
  const rubric = () => new Rubric({ funcs: [plantedOutcomeReward] });
  const simulator = new ToolSimulator({
    tools: options.tools,
    records: options.records,
    client: options.simulator,
    corrections: options.corrections ?? [],
    ...(options.simulatorModel !== undefined ? { model: options.simulatorModel } : {}),
  });
  const envTasks = tasks.map(plantedEnvironmentTask);
  const withTools = new SimulatedToolEnv({ name: 'planted-with-tools', dataset: envTasks, simulator, rubric: rubric(), maxTurns: 6 });
  const closedBook = new SingleTurnEnv({ name: 'planted-closed-book', dataset: envTasks, rubric: rubric() });
  const common = { rolloutsPerTask: options.k, ...(options.solverModel !== undefined ? { model: options.solverModel } : {}), ...(options.signal ? { signal: options.signal } : {}) };
  const open = await evaluate(withTools, options.solver, common);
  if (open.stoppedEarly) throw new Error(`the solver run with tools stopped: ${open.stoppedEarly}`);
  const closed = await evaluate(closedBook, options.solver, common);
  if (closed.stoppedEarly) throw new Error(`the closed-book solver run stopped: ${closed.stoppedEarly}`);
  const passRate = (records: typeof open.records, env: SingleTurnEnv | SimulatedToolEnv, index: number) => {
    const mine = records.filter((record) => record.taskIndex === index);
    return mine.length === 0 ? 0 : mine.filter((record) => env.isPassed(record)).length / mine.length;
  };
  return tasks.map((task, index) => {
    const toolPassRate = passRate(open.records, withTools, index);
    const closedBookPassRate = passRate(closed.records, closedBook, index);
    const rejection = closedBookPassRate > (options.maxClosedBookPassRate ?? 0) ? 'answerable-without-tools' : toolPassRate < (options.minToolPassRate ?? 0.5) ? 'unsolved-with-tools' : null;
    return { ...task, toolPassRate, closedBookPassRate, kept: rejection === null, rejection };
  });
}
