/**
 * The wire shapes of `tabrl serve` (OpenEnv's protocol, docs/serve.md): the requests a client sends
 * over /ws, the replies, the error codes, the observation, and the JSON Schemas served at /schema.
 * Plain types and constants only; the session and the server that speak them live beside it.
 */
import type { Message, ToolSchema } from '../../envs/index.ts';

/** The error codes of an `{"type":"error"}` reply (OpenEnv's names). */
export type WireErrorCode = 'INVALID_JSON' | 'UNKNOWN_TYPE' | 'VALIDATION_ERROR' | 'EXECUTION_ERROR' | 'CAPACITY_REACHED' | 'SESSION_ERROR';

/** Which task list a reset draws from: the environment's training set or its evaluation set. */
export type Split = 'train' | 'eval';

/** The data of a `reset` request, checked (task_index wins over seed; neither: the next task in order). */
export interface ResetData {
  seed?: number;
  episode_id?: string;
  task_index?: number;
  split?: Split;
}

/** What a client sees of the conversation at one point of an episode (the observation's own fields; OpenEnv drops `metadata`). */
export interface Observation {
  /** What is new for the model: on reset the last user message's text, after a step the environment's reply ("" when none). */
  prompt: string;
  /** The whole conversation so far in the OpenAI shape, system prompt included. */
  messages: Message[];
  /** The tools the model may call (OpenAI schemas), for tool environments. */
  tools?: ToolSchema[];
  task_index: number;
  split: Split;
  /** The task's info, as the environment defines it. */
  info?: Record<string, unknown>;
  /** Model turns taken so far. */
  turn: number;
  /** Last step only: each weighted reward function's raw score, by name. */
  scores?: Record<string, number>;
  /** Last step only: each weight-0 function's score (the rubric's metrics), by name. */
  metrics?: Record<string, number>;
  /** Last step only: why the rollout ended (completed, max_turns, length, or a stop condition's name). */
  stop_reason?: string;
  /** Last step only: the rollout's recorded errors (a reward that threw, ...), one line each. */
  error?: string;
}

/** The data of an `{"type":"observation"}` reply, and the body of POST /reset and /step. */
export interface StepResult {
  observation: Observation;
  /** Null on every step but the last, where it is the rubric's weighted total (what `tabrl eval` reports). */
  reward: number | null;
  done: boolean;
  /** The environment ended the episode itself. */
  terminated: boolean;
  /** The episode hit the turn or token limit. */
  truncated: boolean;
}

/** The data of a `{"type":"state"}` reply. */
export interface SessionState {
  episode_id: string | null;
  step_count: number;
  task_index: number | null;
  split: Split | null;
  done: boolean;
}

/** A failure a request ends in, sent as `{"type":"error","data":{message, code, ...extra}}`. */
export class WireError extends Error {
  override readonly name = 'WireError';

  constructor(
    readonly code: WireErrorCode,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/**
 * The JSON Schema of an action: one required field, `message`, so a trainer may pass the model's raw
 * reply through. Its title is not OpenEnv's generic "Action": verifiers' openenv taskset reads that
 * title (and "CallToolAction", "ListToolsAction") as an MCP environment and lists tools before reset.
 */
export const ACTION_SCHEMA = {
  title: 'TabrlAction',
  type: 'object',
  description: 'The model\'s reply. Tool environments also take {"type":"call_tool","tool_name":...,"arguments":{...}}, or tool_calls beside message.',
  properties: {
    message: { type: 'string', description: "The text of the model's reply." },
    tool_calls: { type: 'array', description: 'OpenAI tool calls: [{"id","type":"function","function":{"name","arguments":"<JSON text>"}}].', items: { type: 'object' } },
  },
  required: ['message'],
  additionalProperties: false,
} as const;

/** The JSON Schema of an observation (the fields of `Observation`). */
export const OBSERVATION_SCHEMA = {
  title: 'Observation',
  type: 'object',
  properties: {
    prompt: { type: 'string' },
    messages: { type: 'array', items: { type: 'object' } },
    tools: { type: 'array', items: { type: 'object' } },
    task_index: { type: 'integer' },
    split: { type: 'string', enum: ['train', 'eval'] },
    info: { type: 'object' },
    turn: { type: 'integer' },
    scores: { type: 'object', additionalProperties: { type: 'number' } },
    metrics: { type: 'object', additionalProperties: { type: 'number' } },
    stop_reason: { type: 'string' },
    error: { type: 'string' },
  },
  required: ['prompt', 'messages', 'task_index', 'split', 'turn'],
} as const;

/** The JSON Schema of a session's state (the fields of `SessionState`). */
export const STATE_SCHEMA = {
  title: 'State',
  type: 'object',
  properties: {
    episode_id: { type: ['string', 'null'] },
    step_count: { type: 'integer' },
    task_index: { type: ['integer', 'null'] },
    split: { type: ['string', 'null'] },
    done: { type: 'boolean' },
  },
  required: ['episode_id', 'step_count'],
} as const;
