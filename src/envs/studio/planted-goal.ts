/**
 * The end state of a task planted backwards that is reached by a write: the call the agent must
 * have made to the simulated backend (`info.goal`, `{tool, arguments}`), checked against the state
 * the episode reached (its backend's calls, `SimulatedToolState.backend.calls`): the last write of
 * that tool to the same entity (the goal's first argument, e.g. the tracking id) must carry the
 * goal's arguments, so a later write that changes them again undoes it. Values compare after
 * trimming and lower-casing text. Pure functions over plain data; no model is called here.
 */
import type { RewardContext } from '../rubric.ts';
import type { State } from '../types.ts';
import type { ToolRecord } from './tool-records.ts';

/** A write the agent must make: the tool and its arguments; the first argument names the entity written. */
export interface PlantedGoal {
  tool: string;
  arguments: Record<string, unknown>;
}

/** The goal of a task's info, or undefined when it has none or it is malformed (environment data is untrusted). */
export function plantedGoalOf(info: Record<string, unknown>): PlantedGoal | undefined {
  const goal = info.goal as Partial<PlantedGoal> | null | undefined;
  if (typeof goal !== 'object' || goal === null || typeof goal.tool !== 'string' || typeof goal.arguments !== 'object' || goal.arguments === null || Object.keys(goal.arguments).length === 0)
    return undefined;
  return { tool: goal.tool, arguments: goal.arguments as Record<string, unknown> };
}

/** The calls an episode's state recorded (empty for a state with no simulated backend, e.g. a closed-book run). */
function backendCalls(state: State): ToolRecord[] {
  const backend = (state as State & { backend?: { calls?: unknown } }).backend;
  return Array.isArray(backend?.calls) ? (backend.calls as ToolRecord[]) : [];
}

const same = (a: unknown, b: unknown) => (typeof a === 'string' && typeof b === 'string' ? a.trim().toLowerCase() === b.trim().toLowerCase() : JSON.stringify(a) === JSON.stringify(b));

/** True when the state reached holds the goal: the last call of the goal's tool on its entity has every goal argument. */
export function reachedPlantedGoal(state: State, goal: PlantedGoal): boolean {
  const [entity, entityValue] = Object.entries(goal.arguments)[0]!;
  const writes = backendCalls(state).filter((call) => call.tool === goal.tool && same(call.arguments[entity], entityValue));
  const last = writes.at(-1);
  return last !== undefined && Object.entries(goal.arguments).every(([name, value]) => same(last.arguments[name], value));
}

/** 1 when the task has a planted goal and the rollout's state reached it, else 0 (a task without a goal is scored by its answer). */
export function reachedStateReward(ctx: RewardContext): number {
  const goal = plantedGoalOf(ctx.info);
  return goal !== undefined && reachedPlantedGoal(ctx.state, goal) ? 1 : 0;
}
