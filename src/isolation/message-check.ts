/**
 * The host's check of what comes back from untrusted environment code, in both hosts: every message
 * from the CLI's isolated process (`checkChildMessage`), and what the browser sandbox returns to the
 * page (`checkEnvironmentInfo`, `checkTrajectories`). Environment code may forge, malform or inflate
 * what it sends, so a value is plain data (no class instances, cycles or `__proto__` keys, at most
 * 100 levels deep) of at most the size a rollout may send; a trajectory or verdict has the fields and
 * types the host reads, and finite rewards of at most MAX_ABS_REWARD; names and error texts are cut
 * to a length a results line, metadata.json and a terminal can hold. A value that fails says why, so
 * the host can fail the rollout it names and stop the code that sent it.
 *
 * It checks shapes and sizes only; what a model call may ask is src/cli/model-call-filter.ts's job.
 */
import type { ChildMessage, EnvironmentInfo, SandboxTrajectory } from './protocol.ts';
import type { RubricScore, Task } from '../envs/index.ts';

/** The largest reward or score magnitude accepted: beyond it, sums and means over a run overflow or lose meaning. */
const MAX_ABS_REWARD = 1e9;
/** Error texts from environment code are cut to this many characters. */
export const MAX_ERROR_CHARS = 2000;
/** Names (the environment's, a reward function's) are cut to, or refused beyond, this many characters. */
const MAX_NAME_CHARS = 200;
const MAX_DEPTH = 100;
const MAX_REWARD_FUNCTIONS = 256;
/** Keys that would change an object's prototype or shadow its methods when used as a name. */
const FORBIDDEN_NAMES = new Set(['__proto__', 'constructor', 'prototype']);
const STOP_REASONS = new Set(['completed', 'max_turns', 'length', 'error', 'aborted']);
const ERROR_SOURCES = new Set(['client', 'env', 'reward', 'parser']);

/** A message that passed, or why it did not (with the rollout it names, when it names one). */
type CheckedMessage = { ok: true; message: ChildMessage } | { ok: false; reason: string; rolloutId?: number };

/** A value returned by the browser sandbox that passed (its texts cut in place), or why it did not. */
export type CheckedValue<T> = { ok: true; value: T } | { ok: false; reason: string };

class Invalid extends Error {}

/** Checks one message from the child against the protocol, `maxBytes` (the largest rollout it may send) and the limits above; texts are cut in place. */
export function checkChildMessage(raw: unknown, maxBytes: number): CheckedMessage {
  const rolloutId = isRecord(raw) && isId(raw.rolloutId) ? raw.rolloutId : undefined;
  try {
    if (!isRecord(raw) || typeof raw.type !== 'string') throw new Invalid('a message that is not an object with a type');
    measurePlainData(raw, maxBytes);
    const message = raw as Record<string, unknown>;
    switch (raw.type) {
      case 'ready':
      case 'pong':
        break;
      case 'entered':
      case 'running':
        if (!isId(message.rolloutId) && message.rolloutId !== -1) throw new Invalid(`${raw.type} without a rollout id`);
        break;
      case 'load-failed':
        message.message = capText(requireString(message.message, 'load-failed message'), MAX_ERROR_CHARS);
        break;
      case 'rollout-failed':
        requireId(message.rolloutId, 'rollout-failed');
        message.message = capText(requireString(message.message, 'rollout-failed message'), MAX_ERROR_CHARS);
        break;
      case 'create-completion':
        requireId(message.callId, 'create-completion callId');
        if (!isId(message.rolloutId) && message.rolloutId !== -1) throw new Invalid('create-completion without a rollout id');
        if (message.client !== 'policy' && message.client !== 'judge' && message.client !== 'simulator')
          throw new Invalid('create-completion for a client that is neither policy, judge nor simulator');
        break;
      case 'rollout-done':
        requireId(message.rolloutId, 'rollout-done');
        checkTrajectory(message.trajectory);
        break;
      case 'group-scored':
        requireId(message.rolloutId, 'group-scored');
        if (!Array.isArray(message.verdicts) || !Array.isArray(message.passed) || message.verdicts.length !== message.passed.length)
          throw new Invalid('group-scored without a verdict and a pass flag per rollout');
        message.verdicts.forEach((verdict, i) => checkScore(verdict, `verdicts[${i}]`));
        if (!message.passed.every((passed) => typeof passed === 'boolean')) throw new Invalid('group-scored with a pass flag that is not a boolean');
        break;
      case 'loaded':
        checkLoaded(message);
        break;
      default:
        throw new Invalid(`a message of unknown type ${JSON.stringify(capText(raw.type, 40))}`);
    }
    return { ok: true, message: raw as ChildMessage };
  } catch (error) {
    if (!(error instanceof Invalid)) throw error;
    return { ok: false, reason: `the environment process sent an invalid message (${error.message})`, ...(rolloutId !== undefined ? { rolloutId } : {}) };
  }
}

/** `text` cut to `max` characters, saying how much was cut. */
export function capText(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… [${text.length - max} more characters cut by tabrl]`;
}

/** The browser sandbox's answer to loading an environment, checked as a child's 'loaded' message checks it (at most `maxBytes`). */
export function checkEnvironmentInfo(raw: unknown, maxBytes: number): CheckedValue<EnvironmentInfo> {
  return checkValue(raw, maxBytes, (value) => checkInfo(value, 'environment info'));
}

/** `count` trajectories the browser sandbox returned (one rollout, or a scored group), each checked as a child's 'rollout-done' checks one (at most `maxBytes` in all). */
export function checkTrajectories(raw: unknown, count: number, maxBytes: number): CheckedValue<SandboxTrajectory[]> {
  return checkValue(raw, maxBytes, (value) => {
    if (!Array.isArray(value) || value.length !== count) throw new Invalid(`${Array.isArray(value) ? value.length : 'no'} trajectories where ${count} were due`);
    value.forEach(checkTrajectory);
  });
}

/** The training tasks the browser sandbox returned (for a task pool kept by the app): an array of objects, each with a string question or an array prompt (at most `maxBytes` in all). */
export function checkTasks(raw: unknown, maxBytes: number): CheckedValue<Task[]> {
  return checkValue(raw, maxBytes, (value) => {
    if (!Array.isArray(value)) throw new Invalid('training tasks that are not an array');
    for (const task of value) if (!isRecord(task) || (typeof task.question !== 'string' && !Array.isArray(task.prompt))) throw new Invalid('a training task without a question or a prompt');
  });
}

function checkValue<T>(raw: unknown, maxBytes: number, check: (value: unknown) => void): CheckedValue<T> {
  try {
    measurePlainData(raw, maxBytes);
    check(raw);
    return { ok: true, value: raw as T };
  } catch (error) {
    if (!(error instanceof Invalid)) throw error;
    return { ok: false, reason: `the environment's sandbox returned invalid data (${error.message})` };
  }
}

function checkTrajectory(value: unknown): asserts value is SandboxTrajectory {
  if (!isRecord(value)) throw new Invalid('rollout-done without a trajectory');
  for (const field of ['prompt', 'completion', 'turns', 'errors'] as const) if (!Array.isArray(value[field])) throw new Invalid(`a trajectory whose ${field} is not an array`);
  for (const field of ['info', 'state', 'timings'] as const) if (!isRecord(value[field])) throw new Invalid(`a trajectory whose ${field} is not an object`);
  if (typeof value.passed !== 'boolean' || typeof value.truncated !== 'boolean') throw new Invalid('a trajectory without its passed and truncated flags');
  if (typeof value.stopReason !== 'string' || !STOP_REASONS.has(value.stopReason)) throw new Invalid('a trajectory with an unknown stopReason');
  for (const field of ['answer', 'task', 'stopCondition'] as const)
    if (value[field] !== undefined && typeof value[field] !== 'string') throw new Invalid(`a trajectory whose ${field} is not a string`);
  if (value.taskIndex !== undefined && !isId(value.taskIndex)) throw new Invalid('a trajectory whose taskIndex is not an index');
  if (value.turnRewards !== undefined && (!Array.isArray(value.turnRewards) || !value.turnRewards.every(isBoundedNumber)))
    throw new Invalid(`turn rewards that are not finite numbers of at most ${MAX_ABS_REWARD} in magnitude`);
  const timings = value.timings as Record<string, unknown>;
  if (!['generationMs', 'scoringMs', 'totalMs'].every((key) => typeof timings[key] === 'number' && Number.isFinite(timings[key]))) throw new Invalid('a trajectory without finite timings');
  checkScore(value, 'the trajectory');
}

/** A reward with its scores and errors (a trajectory, or a group verdict): finite bounded numbers, safe names, errors cut to length. */
function checkScore(value: unknown, what: string): asserts value is RubricScore {
  if (!isRecord(value)) throw new Invalid(`${what} is not an object`);
  if (!isBoundedNumber(value.reward)) throw new Invalid(`${what} has reward ${describeNumber(value.reward)}, not a finite number of at most ${MAX_ABS_REWARD} in magnitude`);
  if (!isRecord(value.scores)) throw new Invalid(`${what} has no scores object`);
  for (const [name, score] of Object.entries(value.scores)) {
    checkName(name, `${what}'s score name`);
    if (!isBoundedNumber(score)) throw new Invalid(`${what} has score ${describeNumber(score)} for ${name}, not a finite number of at most ${MAX_ABS_REWARD} in magnitude`);
  }
  if (!Array.isArray(value.errors)) throw new Invalid(`${what} has no errors array`);
  for (const error of value.errors) {
    if (!isRecord(error) || typeof error.source !== 'string' || !ERROR_SOURCES.has(error.source) || typeof error.name !== 'string' || typeof error.message !== 'string') {
      throw new Invalid(`${what} has an error that is not { source, name, message }`);
    }
    error.name = capText(error.name, MAX_NAME_CHARS);
    error.message = capText(error.message, MAX_ERROR_CHARS);
    if (error.kind !== undefined && typeof error.kind !== 'string') throw new Invalid(`${what} has an error whose kind is not a string`);
    if (typeof error.kind === 'string') error.kind = capText(error.kind, 40);
  }
}

function checkLoaded(message: Record<string, unknown>): void {
  checkInfo(message.info, 'loaded');
  const setup = message.setup;
  if (!isRecord(setup) || !Array.isArray(setup.fewShot) || !isRecord(setup.samplingArgs) || (setup.systemPrompt !== undefined && typeof setup.systemPrompt !== 'string'))
    throw new Invalid('loaded without its prompt setup');
  for (const split of ['dataset', 'evalDataset', 'demonstrationDataset'] as const) {
    const tasks = message[split];
    if (tasks === null && split !== 'dataset') continue;
    if (!Array.isArray(tasks) || !tasks.every(isRecord)) throw new Invalid(`loaded with a ${split} that is not an array of tasks`);
  }
}

/** An EnvironmentInfo as `what` (a 'loaded' message, or the sandbox's answer to loading) carries it. */
function checkInfo(info: unknown, what: string): asserts info is EnvironmentInfo {
  if (!isRecord(info) || typeof info.name !== 'string' || typeof info.kind !== 'string') throw new Invalid(`${what} without the environment name and kind`);
  info.name = capText(info.name, MAX_NAME_CHARS);
  info.kind = capText(info.kind, MAX_NAME_CHARS);
  if (!isId(info.numTasks) || !isId(info.numEvaluationTasks)) throw new Invalid(`${what} without task counts`);
  if (typeof info.passThreshold !== 'number' || !Number.isFinite(info.passThreshold)) throw new Invalid(`${what} with a pass threshold that is not a finite number`);
  checkRewardNames(info.rewardNames, info.rewardWeights, 'reward', what);
  if (info.groupRewardNames !== undefined || info.groupRewardWeights !== undefined) checkRewardNames(info.groupRewardNames, info.groupRewardWeights, 'group reward', what);
  if (info.metricKinds !== undefined && (!isRecord(info.metricKinds) || !Object.values(info.metricKinds).every((kind) => typeof kind === 'string')))
    throw new Invalid(`${what} with metric kinds that are not names`);
  if (info.answerTemplate !== undefined && typeof info.answerTemplate !== 'string') throw new Invalid(`${what} with an answer template that is not a string`);
  if (info.tools !== undefined && !Array.isArray(info.tools)) throw new Invalid(`${what} with tools that are not an array`);
  if (info.plantedPaths !== undefined && !isId(info.plantedPaths)) throw new Invalid(`${what} with a count of planted paths that is not a whole number`);
  if (info.unusedArgWarnings !== undefined) {
    if (!Array.isArray(info.unusedArgWarnings) || !info.unusedArgWarnings.every((warning) => typeof warning === 'string')) throw new Invalid(`${what} with argument warnings that are not texts`);
    info.unusedArgWarnings = info.unusedArgWarnings.slice(0, MAX_REWARD_FUNCTIONS).map((warning: string) => capText(warning, MAX_ERROR_CHARS));
  }
}

function checkRewardNames(names: unknown, weights: unknown, what: string, where: string): void {
  if (!Array.isArray(names) || !Array.isArray(weights) || names.length !== weights.length || names.length > MAX_REWARD_FUNCTIONS)
    throw new Invalid(`${where} without a name and a weight per ${what} function (at most ${MAX_REWARD_FUNCTIONS})`);
  for (const name of names) checkName(name, `a ${what} function name`);
  if (new Set(names).size !== names.length) throw new Invalid(`${where} with two ${what} functions of the same name; give each function its own name`);
  if (!weights.every((weight) => typeof weight === 'number' && Number.isFinite(weight))) throw new Invalid(`${where} with a ${what} weight that is not a finite number`);
}

function checkName(name: unknown, what: string): void {
  if (typeof name !== 'string' || name.length === 0 || name.length > MAX_NAME_CHARS) throw new Invalid(`${what} that is not a string of 1 to ${MAX_NAME_CHARS} characters`);
  if (FORBIDDEN_NAMES.has(name)) throw new Invalid(`${what} "${name}", which tabrl cannot use as a key; rename the function`);
}

/**
 * Walks `value` as the plain data a message may hold, adding up its size as JSON would write it
 * (shared references counted each time, as they would be written), and throws when it is not plain
 * data or exceeds `maxBytes`. The walk stops at the budget, so a huge message costs no more than it.
 */
function measurePlainData(root: unknown, maxBytes: number): void {
  let bytes = 0;
  const ancestors = new Set<object>();
  const add = (n: number) => {
    bytes += n;
    if (bytes > maxBytes) throw new Invalid(`over the ${(maxBytes / 2 ** 20).toFixed(0)} MiB a message may hold`);
  };
  const walk = (value: unknown, depth: number): void => {
    if (value === null || value === undefined || typeof value === 'boolean') return add(5);
    if (typeof value === 'number') return add(24);
    if (typeof value === 'string') return add(value.length + 2);
    if (typeof value !== 'object') throw new Invalid(`a ${typeof value} value, which is not plain data`);
    if (depth > MAX_DEPTH) throw new Invalid(`data nested more than ${MAX_DEPTH} levels deep`);
    const prototype = Object.getPrototypeOf(value) as unknown;
    const isArray = Array.isArray(value);
    if (!isArray && prototype !== Object.prototype && prototype !== null) throw new Invalid('an object that is not plain data (a Map, Set, Date, typed array or class instance)');
    if (ancestors.has(value)) throw new Invalid('data that contains itself');
    ancestors.add(value);
    add(2);
    if (isArray) for (const item of value as unknown[]) walk(item, depth + 1);
    else {
      for (const [key, item] of Object.entries(value)) {
        if (key === '__proto__') throw new Invalid('an object with a "__proto__" key');
        add(key.length + 3);
        walk(item, depth + 1);
      }
    }
    ancestors.delete(value);
  };
  walk(root, 0);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isId(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function requireId(value: unknown, what: string): void {
  if (!isId(value)) throw new Invalid(`${what} without a valid id`);
}

function requireString(value: unknown, what: string): string {
  if (typeof value !== 'string') throw new Invalid(`${what} that is not a string`);
  return value;
}

function isBoundedNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && Math.abs(value) <= MAX_ABS_REWARD;
}

function describeNumber(value: unknown): string {
  return typeof value === 'number' ? String(value) : typeof value;
}
