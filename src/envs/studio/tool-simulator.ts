/**
 * Simulated tools: a tool that cannot be called is answered by a simulator model, prompted with the
 * tool's schema, the recorded calls of the same tool closest to this call (tool-retrieval.ts), the
 * facts of the episode's simulated backend (answers planted before the episode, and the calls made
 * so far, which later calls read), and corrections from refinement rounds. A write changes what
 * later reads of the same entity return, whoever answers them (backend-writes.ts): every result is
 * given after the episode's earlier writes are applied to it. Results are consistent:
 * a call repeated in an episode gets its first result, and every episode of the same task (a GRPO
 * group) that makes the same calls in the same order gets the same results (one cache per
 * simulator, keyed by the task's episode key and the calls so far; the model is asked at temperature
 * 0 with a seed derived from that key). The cache is bounded by groups: it holds the results of at
 * most `maxCachedGroups` task keys (an episode's calls bound a group's own entries), and evicts the
 * group used least recently — never one with an episode in flight (`beginEpisode`/`endEpisode`,
 * which SimulatedToolEnv calls around each rollout). Evaluation and GRPO start a task's rollouts one
 * after another, so a group is never idle between its rollouts and the same call keeps its result
 * across the group; a group evicted after its last rollout is asked anew by a later group of the
 * same task. A simulator that fails or answers garbage raises a `SimulatorError`. This module does
 * not read files and holds no environment.
 */
import type { ChatClient } from '../client.ts';
import type { ToolSchema } from '../types.ts';
import { errorMessage } from '../../common/error-message.ts';
import type { ToolRecord } from './tool-records.ts';
import { canonicalJson, nearestRecords } from './tool-retrieval.ts';
import { applyEpisodeWrites, writtenFieldNames, type WrittenFieldNames } from './backend-writes.ts';

/** A simulator call that failed (`failed`: unreachable, refused) or whose reply is no usable result (`garbage`: empty, not JSON where the tool answers JSON). */
export class SimulatorError extends Error {
  override readonly name = 'SimulatorError';

  constructor(
    message: string,
    readonly kind: 'failed' | 'garbage' = 'failed',
  ) {
    super(message);
  }
}

/** A call to simulate: which tool, with which arguments. */
export interface SimulatedCall {
  tool: string;
  arguments: Record<string, unknown>;
}

/** A wrong answer of an earlier round, shown to the simulator with the real result. */
export interface SimulatorCorrection extends SimulatedCall {
  simulated: string;
  result: string;
}

/**
 * The simulated backend of one episode (plain data, kept in the rollout's state): its key, the
 * records planted before it started (they hold, whatever the traces say), and the calls made so far.
 */
export interface SimulatedBackend {
  key: string;
  planted: ToolRecord[];
  calls: ToolRecord[];
}

/** What a simulator needs. */
export interface ToolSimulatorOptions {
  tools: readonly ToolSchema[];
  /** The recorded calls retrieval reads. */
  records: readonly ToolRecord[];
  /** The simulator model (an endpoint, or `ScriptedSimulatorClient` offline). */
  client: ChatClient;
  model?: string;
  /** Recorded calls shown per simulated call (default 4). */
  examples?: number;
  /** Corrections added to every prompt (from `--rounds`). */
  corrections?: readonly SimulatorCorrection[];
  /** Mixed into every call's seed (default 0). */
  seed?: number;
  /** Task keys (groups) whose results the cache keeps at most (default 256); see the module comment. */
  maxCachedGroups?: number;
}

/** Groups whose results the simulator's cache keeps unless told otherwise. */
const DEFAULT_MAX_CACHED_GROUPS = 256;

/** Heading lines of the simulator prompt that `ScriptedSimulatorClient` reads back. */
export const SIMULATOR_CALL_HEADING = '### Call ';
const RESULT_HEADING = '### Result';
/** The line before the call the simulator must answer. */
export const SIMULATOR_TASK_LINE = 'The call to answer:';

/** Answers tool calls with a simulator model; see the module comment. */
export class ToolSimulator {
  readonly tools: Map<string, ToolSchema>;
  /** Cached results per group (task key), least recently used first; each maps the calls so far and the call to its result. */
  private readonly groups = new Map<string, Map<string, Promise<string>>>();
  /** Episodes in flight per group; such a group is never evicted. */
  private readonly inFlight = new Map<string, number>();
  /** Simulator model calls made (cache hits are not counted). */
  calls = 0;
  /** Which result fields each recorded write's arguments are echoed in (backend-writes.ts). */
  private readonly writtenFields: WrittenFieldNames;

  constructor(readonly options: ToolSimulatorOptions) {
    this.tools = new Map(options.tools.map((tool) => [tool.function.name, tool]));
    this.writtenFields = writtenFieldNames(options.records);
  }

  /** The result of `call` in the episode `backend`, after the episode's earlier writes; the call and that result are added to the backend's calls. */
  async simulate(call: SimulatedCall, backend: SimulatedBackend): Promise<string> {
    const result = applyEpisodeWrites(await this.answer(call, backend), call, backend.calls, this.writtenFields);
    backend.calls.push({ tool: call.tool, arguments: call.arguments, result });
    return result;
  }

  /** The result of `call` before the episode's writes: a repeated call's earlier result, else the simulator's (cached per group). */
  private async answer(call: SimulatedCall, backend: SimulatedBackend): Promise<string> {
    const args = canonicalJson(call.arguments);
    const repeated = [...backend.planted, ...backend.calls].findLast((record) => record.tool === call.tool && canonicalJson(record.arguments) === args);
    if (repeated) return repeated.result;
    const path = `${backend.calls.map((record) => `${record.tool}${canonicalJson(record.arguments)}`).join(';')}|${call.tool}${args}`;
    const key = `${backend.key}|${path}`;
    const cache = this.groupCache(backend.key);
    let pending = cache.get(path);
    if (!pending) {
      pending = this.ask(call, backend, key);
      cache.set(path, pending);
      pending.catch(() => cache.delete(path));
    }
    return pending;
  }

  /** Marks an episode of the group `key` as running: the group's cached results stay until it ends. */
  beginEpisode(key: string): void {
    this.inFlight.set(key, (this.inFlight.get(key) ?? 0) + 1);
    this.groupCache(key);
  }

  /** Marks an episode of the group `key` as ended; idle groups beyond the bound are evicted, least recently used first. */
  endEpisode(key: string): void {
    const running = (this.inFlight.get(key) ?? 1) - 1;
    if (running > 0) this.inFlight.set(key, running);
    else this.inFlight.delete(key);
    this.evictIdleGroups();
  }

  /** The task keys whose results are cached, least recently used first. */
  cachedGroups(): string[] {
    return [...this.groups.keys()];
  }

  /** The cache of group `key`, made the most recently used. */
  private groupCache(key: string): Map<string, Promise<string>> {
    const cache = this.groups.get(key) ?? new Map<string, Promise<string>>();
    this.groups.delete(key);
    this.groups.set(key, cache);
    this.evictIdleGroups();
    return cache;
  }

  /** Drops the least recently used groups without an episode in flight until at most `maxCachedGroups` remain (or only running ones do). */
  private evictIdleGroups(): void {
    const limit = Math.max(1, this.options.maxCachedGroups ?? DEFAULT_MAX_CACHED_GROUPS);
    // The most recently used group (the one being asked now) stays whatever the others are.
    for (const key of [...this.groups.keys()].slice(0, -1)) {
      if (this.groups.size <= limit) return;
      if (!this.inFlight.has(key)) this.groups.delete(key);
    }
  }

  /** The prompt for one call (exported through `simulatorPrompt` for tests and docs). */
  prompt(call: SimulatedCall, backend: Pick<SimulatedBackend, 'planted' | 'calls'>): string {
    return simulatorPrompt(this.tools.get(call.tool), call, {
      examples: nearestRecords(this.options.records, call.tool, call.arguments, this.options.examples ?? 4).map((scored) => scored.record),
      facts: [...backend.planted, ...backend.calls],
      corrections: (this.options.corrections ?? []).filter((correction) => correction.tool === call.tool),
    });
  }

  private async ask(call: SimulatedCall, backend: SimulatedBackend, key: string): Promise<string> {
    if (!this.tools.has(call.tool)) throw new SimulatorError(`no tool "${call.tool}" is simulated here (tools: ${[...this.tools.keys()].join(', ')})`);
    this.calls += 1;
    let reply: string;
    try {
      const completion = await this.options.client.chat.completions.create({
        model: this.options.model ?? 'default',
        messages: [{ role: 'user', content: this.prompt(call, backend) }],
        temperature: 0,
        seed: (hashText(key) ^ (this.options.seed ?? 0)) >>> 0,
        max_tokens: 1024,
      });
      reply = completion.choices[0]?.message.content ?? '';
    } catch (error) {
      throw new SimulatorError(`the simulator model failed on ${call.tool}: ${errorMessage(error)}; check that the simulator endpoint is running and its model name`);
    }
    return checkSimulatedResult(
      reply,
      call.tool,
      nearestRecords(this.options.records, call.tool, call.arguments, 8).map((scored) => scored.record.result),
    );
  }
}

/** What the simulator prompt shows besides the schema and the call. */
export interface SimulatorPromptParts {
  examples: readonly ToolRecord[];
  facts: readonly ToolRecord[];
  corrections: readonly SimulatorCorrection[];
}

/** The simulator's prompt for one call: instructions, schema, recorded examples, the episode's facts, corrections, then the call. */
export function simulatorPrompt(schema: ToolSchema | undefined, call: SimulatedCall, parts: SimulatorPromptParts): string {
  const block = (record: { tool: string; arguments: Record<string, unknown>; result: string }) =>
    `${SIMULATOR_CALL_HEADING}${record.tool}\n${JSON.stringify(record.arguments)}\n${RESULT_HEADING}\n${record.result}\n`;
  const sections = [
    `You simulate the tool "${call.tool}" of an API that cannot be called. Answer the call as the real tool would: reply with the tool's result alone, in the format of the recorded results (JSON when they are JSON), and nothing else. Keep to the facts of this episode: they are the backend's state.`,
    `Tool schema:\n${JSON.stringify(schema?.function ?? { name: call.tool }, null, 2)}`,
    `Recorded calls of this tool, most similar first:\n${parts.examples.map(block).join('') || '(none)\n'}`,
  ];
  if (parts.facts.length > 0) sections.push(`Facts of this episode (the backend's state; results must agree with them):\n${parts.facts.map(block).join('')}`);
  if (parts.corrections.length > 0) {
    const corrections = parts.corrections.map(
      (correction) => `\nA simulator answered ${JSON.stringify(correction.simulated.slice(0, 400))} to the call below; the real result follows.\n${block(correction)}`,
    );
    sections.push(`Corrections (earlier simulated results that were wrong, with the real result):\n${corrections.join('')}`);
  }
  sections.push(`${SIMULATOR_TASK_LINE}\n${SIMULATOR_CALL_HEADING}${call.tool}\n${JSON.stringify(call.arguments)}\n${RESULT_HEADING}\n`);
  return sections.join('\n');
}

/** A reply as a result: the text inside a ```json fence, trimmed; refused when empty, or not JSON while the tool's recorded results are. */
export function checkSimulatedResult(reply: string, tool: string, recordedResults: readonly string[]): string {
  const fenced = /```(?:json)?\s*\n([\s\S]*?)\n```/.exec(reply);
  const result = (fenced ? fenced[1]! : reply).trim();
  if (result === '') throw new SimulatorError(`the simulator gave an empty result for ${tool}; check that the simulator is a chat model that follows instructions`, 'garbage');
  if (recordedResults.length > 0 && recordedResults.every(isJson) && !isJson(result)) {
    throw new SimulatorError(`the simulator's result for ${tool} is not JSON, while the recorded results are: "${result.slice(0, 120)}"`, 'garbage');
  }
  return result;
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** FNV-1a hash of a text, as an unsigned 32-bit integer (episode keys and seeds). */
export function hashText(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}
