/**
 * A tool environment whose tools are simulated (tool-simulator.ts): each episode gets a simulated
 * backend in its state — keyed by the task, so every rollout of a GRPO group shares the simulator's
 * cached results, holding the records planted for the task (`info.planted`) and the calls made so
 * far. A simulator that fails or answers garbage ends the rollout with an environment error (never a
 * made-up tool reply).
 */
import { ToolEnv, type Tool, type ToolEnvOptions, type ToolState } from '../tool-env.ts';
import type { Rubric } from '../rubric.ts';
import type { State, ToolSchema } from '../types.ts';
import { errorMessage } from '../../common/error-message.ts';
import type { ToolRecord } from './tool-records.ts';
import { hashText, SimulatorError, type SimulatedBackend, type ToolSimulator } from './tool-simulator.ts';

/** State of a simulated-tool episode: the tool counters, the backend, and the simulator's failure if one happened. */
export interface SimulatedToolState extends ToolState {
  backend: SimulatedBackend;
  simulatorError?: string;
}

/** Options of a simulated-tool environment: a ToolEnv's, with a simulator in place of the tools (and a rubric over any state, since rewards that read a plain State read this one too). */
export interface SimulatedToolEnvOptions extends Omit<ToolEnvOptions<SimulatedToolState>, 'tools' | 'rubric'> {
  simulator: ToolSimulator;
  rubric?: Rubric<SimulatedToolState> | Rubric<State>;
}

/** A ToolEnv whose tools are the simulator's; see the module comment. */
export class SimulatedToolEnv extends ToolEnv<SimulatedToolState> {
  readonly simulator: ToolSimulator;

  constructor(options: SimulatedToolEnvOptions) {
    // A Rubric<State> scores a SimulatedToolState as it is: its functions read only the State part.
    const { rubric, ...rest } = options;
    super({ ...rest, ...(rubric ? { rubric: rubric as Rubric<SimulatedToolState> } : {}), tools: [...options.simulator.tools.values()].map((schema) => simulatedTool(schema, options.simulator)) });
    this.simulator = options.simulator;
  }

  /** Runs one episode, keeping its group's cached results in the simulator while it runs. */
  override async rollout(...args: Parameters<ToolEnv<SimulatedToolState>['rollout']>) {
    const [, task] = args;
    const key = episodeKey({ prompt: this.formatPrompt(task), info: task.info ?? {} });
    this.simulator.beginEpisode(key);
    try {
      return await super.rollout(...args);
    } finally {
      this.simulator.endEpisode(key);
    }
  }

  /** Adds the episode's backend: keyed by the task's prompt (and `info.seed`), with the task's planted records. */
  override async setupState(state: State): Promise<SimulatedToolState> {
    const base = await super.setupState(state);
    return { ...base, backend: { key: episodeKey(state), planted: plantedRecords(state.info.planted), calls: [] } };
  }

  /** Runs the calls; a simulator failure ends the rollout as an environment error. */
  override async envResponse(...args: Parameters<ToolEnv<SimulatedToolState>['envResponse']>) {
    const replies = await super.envResponse(...args);
    const failure = args[1].simulatorError;
    if (failure !== undefined) throw new SimulatorError(failure);
    return replies;
  }
}

/** The key of a task's episodes: the same for every rollout of one task (its prompt and `info.seed`). */
export function episodeKey(state: Pick<State, 'prompt' | 'info'>): string {
  return `task-${hashText(JSON.stringify([state.prompt, state.info.seed ?? null])).toString(16)}`;
}

function simulatedTool(schema: ToolSchema, simulator: ToolSimulator): Tool<Record<string, unknown>, SimulatedToolState> {
  const { name, description, parameters } = schema.function;
  return {
    name,
    description,
    parameters,
    run: async (args, state) => {
      try {
        return await simulator.simulate({ tool: name, arguments: args }, state.backend);
      } catch (error) {
        state.simulatorError = errorMessage(error);
        throw error;
      }
    },
  };
}

/** The planted records of a task's info, checked (environment data is untrusted). */
function plantedRecords(value: unknown): ToolRecord[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new Error('info.planted should be an array of {tool, arguments, result} records');
  return value.map((item, i) => {
    const record = item as Partial<ToolRecord> | null;
    if (typeof record !== 'object' || record === null || typeof record.tool !== 'string' || typeof record.result !== 'string' || typeof record.arguments !== 'object' || record.arguments === null) {
      throw new Error(`info.planted[${i}] should be {tool: string, arguments: object, result: string}`);
    }
    return { tool: record.tool, arguments: record.arguments, result: record.result };
  });
}
