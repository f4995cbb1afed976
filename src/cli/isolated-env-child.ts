/**
 * The child process that runs an environment file for `tabrl eval`, `train` and `serve`: a Node
 * shell around a QuickJS engine compiled to WebAssembly, in which the environment's code runs
 * (with the environment library, quickjs-guest.ts). The engine has no `process`, `require`, Buffer,
 * file system, network or clock of its own; it gets only JSON messages, one-shot timers and a line of
 * output through the functions this shell lends it. Its memory is capped as a whole (the engine's
 * memory limit), and an interrupt handler stops any stretch of its code that runs past the time limit.
 *
 * The shell itself runs only tabrl's code: it relays messages between `tabrl` (Node IPC) and the
 * engine, says which rollout's work it runs ('entered', 'running'), and exits when `tabrl` goes away.
 * It is also started under Node's permission model with an empty environment, so that even a flaw
 * in the engine would find no key, no writable file and no child process. It is not where
 * results are trusted: `tabrl` checks every message again (src/isolation/message-check.ts).
 */
import { newQuickJSWASMModuleFromVariant, type QuickJSContext, type QuickJSHandle, type QuickJSRuntime } from 'quickjs-emscripten-core';
import variant from '@jitl/quickjs-singlefile-cjs-release-sync';
import type { ChildMessage, HostMessage } from '../isolation/protocol.ts';

/** The messages the engine may send; the shell says 'entered', 'running', 'ready' and 'pong' itself. */
const ENGINE_MESSAGE_TYPES = new Set(['loaded', 'load-failed', 'create-completion', 'rollout-done', 'group-scored', 'rollout-failed']);
/** The engine's stack, enough for deep recursion in reward code and no more. */
const STACK_BYTES = 4 * 2 ** 20;

const sendToHost = (message: ChildMessage) => {
  if (process.connected) process.send!(message, () => {});
};

interface Engine {
  runtime: QuickJSRuntime;
  vm: QuickJSContext;
  guest: QuickJSHandle;
  timeLimitMs: number;
  maxMessageBytes: number;
}

let engine: Engine | undefined;
/** When the stretch of engine code now running must end (the interrupt handler's deadline). */
let deadline = Infinity;
/** The interrupt handler stopped the engine in the stretch now running. */
let interruptFired = false;
/** It did so in the entry now running (enter()), whose later messages may be the engine's echo of it. */
let entryInterrupted = false;
/** The rollout whose work the engine runs or last ran (-1: none), as last told to tabrl; every run of engine code goes through enter(), which updates it. */
let running = -1;
/** The rollout each pending timer was set by, so its callback counts as that rollout's code. */
const timers = new Map<number, { handle: ReturnType<typeof setTimeout>; rolloutId: number }>();
/** The rollout each model call came from, so its reply counts as that rollout's code. */
const callOwners = new Map<number, number>();
/** Rollouts the shell has given its own verdict on (interrupted, or too large to send): what the engine says of them later is dropped. */
const interruptedRollouts = new Set<number>();
/** Whether loading ended (the engine said 'loaded' or 'load-failed'). */
let loadSettled = false;

/** Runs `work` (a call into the engine) and the jobs it queued as code of `rolloutId`, each under the time limit. */
function enter(rolloutId: number, work: (vm: QuickJSContext) => void): void {
  const current = engine;
  if (!current) return;
  if (running !== rolloutId) {
    running = rolloutId;
    sendToHost({ type: 'running', rolloutId });
  }
  entryInterrupted = false;
  const timed = (step: () => boolean) => {
    deadline = Date.now() + current.timeLimitMs;
    step();
    if (interruptFired && rolloutId >= 0) interruptedRollouts.add(rolloutId);
    if (interruptFired) entryInterrupted = true;
    interruptFired = false;
  };
  timed(() => {
    try {
      work(current.vm);
      return false;
    } catch {
      return true;
    }
  });
  for (;;) {
    let ran = 0;
    timed(() => {
      const result = current.runtime.executePendingJobs(1);
      if (result.error) {
        result.error.dispose();
        ran = 1;
        return true;
      }
      ran = result.value;
      return false;
    });
    if (ran === 0) break;
  }
  deadline = Infinity;
  if (entryInterrupted && rolloutId === -1 && !loadSettled) {
    loadSettled = true;
    sendToHost({
      type: 'load-failed',
      message: `loading the environment ran for more than ${current.timeLimitMs / 1000} s without returning (an infinite loop at the top level?); it was interrupted`,
    });
  }
  if (entryInterrupted && rolloutId >= 0) {
    sendToHost({ type: 'rollout-failed', rolloutId, message: `ran for more than ${current.timeLimitMs / 1000} s without returning (an infinite loop?); the engine interrupted it`, timeout: true });
  }
}

/** Calls the guest's method `name` with string or number arguments; an exception it throws is thrown here. */
function callGuest(vm: QuickJSContext, name: 'load' | 'receive' | 'fireTimer', ...args: (string | number | QuickJSHandle)[]): void {
  const guest = engine!.guest;
  const method = vm.getProp(guest, name);
  const handles = args.map((arg) => (typeof arg === 'string' ? vm.newString(arg) : typeof arg === 'number' ? vm.newNumber(arg) : arg));
  const result = vm.callFunction(method, guest, ...handles);
  method.dispose();
  handles.forEach((handle, i) => typeof args[i] !== 'object' && handle.dispose());
  vm.unwrapResult(result).dispose();
}

/** A message from the engine: only the types it may send, under the size cap, parsed. */
function onEngineMessage(json: string): void {
  const limit = engine?.maxMessageBytes ?? 0;
  if (json.length > limit) {
    // Too large to read: it fails the rollout whose code sent it (or the load), whatever it claims to be.
    const message = `the environment sent a message of ${(json.length / 2 ** 20).toFixed(1)} MiB, over the ${(limit / 2 ** 20).toFixed(0)} MiB a rollout may send to tabrl`;
    if (running >= 0) {
      interruptedRollouts.add(running);
      return sendToHost({ type: 'rollout-failed', rolloutId: running, message });
    }
    if (!loadSettled) {
      loadSettled = true;
      sendToHost({ type: 'load-failed', message });
    }
    return;
  }
  let message: ChildMessage;
  try {
    message = JSON.parse(json) as ChildMessage;
  } catch {
    return;
  }
  if (typeof message !== 'object' || message === null || !ENGINE_MESSAGE_TYPES.has(message.type)) return;
  // What the engine says of a rollout interrupted for its time is replaced by the shell's own verdict (enter()).
  if ('rolloutId' in message && message.type !== 'create-completion' && (interruptedRollouts.has(message.rolloutId) || (interruptFired && message.rolloutId === running))) return;
  if (message.type === 'load-failed' && entryInterrupted && running === -1) return;
  if (message.type === 'create-completion') callOwners.set(message.callId, message.rolloutId);
  if (message.type === 'loaded' || message.type === 'load-failed') loadSettled = true;
  sendToHost(message);
}

/** Lends the engine the host functions quickjs-guest.ts takes as `__tabrlHost`. */
function lendHost(vm: QuickJSContext): void {
  const host = vm.newObject();
  const lend = (name: string, fn: (...args: QuickJSHandle[]) => QuickJSHandle | undefined) => {
    const handle = vm.newFunction(name, fn);
    vm.setProp(host, name, handle);
    handle.dispose();
  };
  lend('send', (json) => void onEngineMessage(vm.getString(json)));
  lend('setTimer', (id, ms) => {
    const timerId = vm.getNumber(id);
    const owner = running;
    const delay = Math.min(Math.max(0, vm.getNumber(ms) || 0), 2 ** 31 - 1);
    clearTimeout(timers.get(timerId)?.handle);
    timers.set(timerId, {
      rolloutId: owner,
      handle: setTimeout(() => {
        timers.delete(timerId);
        enter(owner, (inner) => callGuest(inner, 'fireTimer', timerId));
      }, delay),
    });
    return undefined;
  });
  lend('clearTimer', (id) => {
    const timerId = vm.getNumber(id);
    clearTimeout(timers.get(timerId)?.handle);
    timers.delete(timerId);
    return undefined;
  });
  lend('log', (text) => {
    process.stderr.write(`${vm.getString(text)}\n`);
    return undefined;
  });
  lend('currentRollout', () => vm.newNumber(running));
  vm.setProp(vm.global, '__tabrlHost', host);
  host.dispose();
}

async function load(message: Extract<HostMessage, { type: 'load' }>): Promise<void> {
  const QuickJS = await newQuickJSWASMModuleFromVariant(variant);
  const runtime = QuickJS.newRuntime();
  runtime.setMemoryLimit(message.memoryBytes);
  runtime.setMaxStackSize(STACK_BYTES);
  runtime.setInterruptHandler(() => {
    if (Date.now() <= deadline) return false;
    interruptFired = true;
    return true;
  });
  const vm = runtime.newContext();
  lendHost(vm);
  // The library is tabrl's code, not the environment's: no time limit while it loads.
  deadline = Infinity;
  vm.unwrapResult(vm.evalCode(message.guest, 'tabrl-runtime.js')).dispose();
  const guest = vm.getProp(vm.global, '__tabrlGuest');
  vm.unwrapResult(vm.evalCode('delete globalThis.__tabrlGuest')).dispose();
  engine = { runtime, vm, guest, timeLimitMs: message.timeLimitMs, maxMessageBytes: message.maxMessageBytes };
  deadline = Infinity;
  // The engine runs: from here on, loading is on the environment's clock.
  sendToHost({ type: 'ready' });
  const { code, guest: _guest, ...rest } = message;
  enter(-1, (inner) => {
    const factory = inner.evalCode(`(function (module, exports, require) {${code}\n})`, message.filename);
    if (factory.error) {
      const error = inner.dump(factory.error) as unknown;
      factory.error.dispose();
      sendToHost({ type: 'load-failed', message: `the environment file threw while it was run: ${describeError(error)}` });
      return;
    }
    callGuest(inner, 'load', factory.value, JSON.stringify(rest));
    factory.value.dispose();
  });
}

function describeError(error: unknown): string {
  if (typeof error === 'object' && error !== null && 'message' in error) return `${(error as { name?: string }).name ?? 'Error'}: ${String((error as { message: unknown }).message)}`;
  return String(error);
}

process.on('message', (message: HostMessage) => {
  if (message.type === 'ping') return sendToHost({ type: 'pong' });
  if (message.type === 'load') {
    load(message).catch((error: unknown) => sendToHost({ type: 'load-failed', message: describeError(error) }));
    return;
  }
  if (!engine) return;
  if (message.type === 'completion') {
    const owner = callOwners.get(message.callId) ?? -1;
    callOwners.delete(message.callId);
    // The reply reaches the rollout: its code runs again, and its clock with it.
    if (owner >= 0) sendToHost({ type: 'entered', rolloutId: owner });
    enter(owner, (vm) => callGuest(vm, 'receive', JSON.stringify(message)));
  } else if (message.type === 'rollout' || message.type === 'score-group') {
    sendToHost({ type: 'entered', rolloutId: message.rolloutId });
    enter(message.rolloutId, (vm) => callGuest(vm, 'receive', JSON.stringify(message)));
  } else if (message.type === 'abort') {
    enter(message.rolloutId, (vm) => callGuest(vm, 'receive', JSON.stringify(message)));
  }
});

// Ctrl-C reaches the whole process group; tabrl decides what a stop means and kills this process itself.
process.on('SIGINT', () => {});
process.on('SIGTERM', () => process.exit(0));
// tabrl went away (its IPC channel closed, which happens even when it is killed): nothing is left to do.
process.on('disconnect', () => process.exit(0));
