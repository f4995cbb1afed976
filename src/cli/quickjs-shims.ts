/**
 * The few Web APIs that environment code and the environment library (src/envs) use and a bare
 * JavaScript engine lacks, for the QuickJS engine that runs environment files in `tabrl`
 * (quickjs-guest.ts): timers (through the host's clock), queueMicrotask, console (to the host's
 * stderr), AbortController/AbortSignal and structuredClone. Each is written in plain JavaScript
 * over what the host lends, so it grants nothing beyond that: no clock of its own, no I/O.
 *
 * It is not a general Web platform: no fetch, no TextEncoder, no URL.
 */

/** What the host lends the shims: a one-shot timer by id, and a line of output. */
interface ShimHost {
  setTimer(id: number, ms: number): void;
  clearTimer(id: number): void;
  log(text: string): void;
}

type TimerCallback = (...args: unknown[]) => void;

/** Installs the shims on `globalThis`; returns the function the host calls when timer `id` is due. */
export function installShims(host: ShimHost): (id: number) => void {
  const timers = new Map<number, { callback: TimerCallback; args: unknown[]; repeatMs?: number }>();
  let nextTimerId = 1;
  const startTimer = (callback: unknown, ms: unknown, args: unknown[], repeat: boolean): number => {
    if (typeof callback !== 'function') throw new TypeError('the timer callback must be a function');
    const id = nextTimerId++;
    const delay = Math.max(0, Number(ms) || 0);
    timers.set(id, { callback: callback as TimerCallback, args, ...(repeat ? { repeatMs: delay } : {}) });
    host.setTimer(id, delay);
    return id;
  };
  const stopTimer = (id: unknown) => {
    if (typeof id === 'number' && timers.delete(id)) host.clearTimer(id);
  };
  const globals = globalThis as Record<string, unknown>;
  globals.setTimeout = (callback: unknown, ms?: unknown, ...args: unknown[]) => startTimer(callback, ms, args, false);
  globals.setInterval = (callback: unknown, ms?: unknown, ...args: unknown[]) => startTimer(callback, ms, args, true);
  globals.clearTimeout = stopTimer;
  globals.clearInterval = stopTimer;
  globals.queueMicrotask = (callback: () => void) => void Promise.resolve().then(callback);
  const print = (...values: unknown[]) => host.log(values.map(formatValue).join(' '));
  globals.console = { log: print, info: print, warn: print, error: print, debug: print, trace: print };
  globals.AbortController = AbortControllerShim;
  globals.AbortSignal = AbortSignalShim;
  globals.structuredClone = cloneStructured;
  return (id) => {
    const timer = timers.get(id);
    if (!timer) return;
    if (timer.repeatMs === undefined) timers.delete(id);
    else host.setTimer(id, timer.repeatMs);
    timer.callback(...timer.args);
  };
}

function formatValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value instanceof Error) return value.stack ? `${value.name}: ${value.message}\n${value.stack}` : `${value.name}: ${value.message}`;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

type AbortListener = (event: { type: 'abort'; target: AbortSignalShim }) => void;

/** An AbortSignal as the library uses it: `aborted`, `reason`, `throwIfAborted`, abort listeners and `onabort`. */
class AbortSignalShim {
  aborted = false;
  reason: unknown = undefined;
  onabort: AbortListener | null = null;
  private listeners: { listener: AbortListener; once: boolean }[] = [];

  static abort(reason?: unknown): AbortSignalShim {
    const controller = new AbortControllerShim();
    controller.abort(reason);
    return controller.signal;
  }

  addEventListener(type: string, listener: AbortListener, options?: { once?: boolean } | boolean): void {
    if (type === 'abort' && typeof listener === 'function') this.listeners.push({ listener, once: typeof options === 'object' && options?.once === true });
  }

  removeEventListener(type: string, listener: AbortListener): void {
    if (type === 'abort') this.listeners = this.listeners.filter((entry) => entry.listener !== listener);
  }

  throwIfAborted(): void {
    if (this.aborted) throw this.reason;
  }

  /** Marks the signal aborted and calls its listeners (the controller's job). */
  fire(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const event = { type: 'abort' as const, target: this };
    const listeners = this.listeners;
    this.listeners = listeners.filter((entry) => !entry.once);
    this.onabort?.(event);
    for (const { listener } of listeners) listener(event);
  }
}

class AbortControllerShim {
  readonly signal = new AbortSignalShim();

  abort(reason?: unknown): void {
    this.signal.fire(reason ?? Object.assign(new Error('This operation was aborted'), { name: 'AbortError' }));
  }
}

/** structuredClone for the data rollouts hold: plain objects, arrays, Map, Set, Date, RegExp, ArrayBuffer and its views, with shared and cyclic references kept. */
function cloneStructured<T>(value: T): T {
  const seen = new Map<object, unknown>();
  const clone = (item: unknown): unknown => {
    if (typeof item === 'function' || typeof item === 'symbol') throw Object.assign(new Error(`${String(item)} could not be cloned`), { name: 'DataCloneError' });
    if (typeof item !== 'object' || item === null) return item;
    const known = seen.get(item);
    if (known !== undefined) return known;
    if (item instanceof Date) return remember(item, new Date(item.getTime()));
    if (item instanceof RegExp) return remember(item, new RegExp(item.source, item.flags));
    if (item instanceof ArrayBuffer) return remember(item, item.slice(0));
    if (ArrayBuffer.isView(item)) {
      const view = item as unknown as {
        constructor: new (buffer: ArrayBuffer, offset: number, length: number) => unknown;
        buffer: ArrayBuffer;
        byteOffset: number;
        byteLength: number;
        length?: number;
      };
      const buffer = view.buffer.slice(view.byteOffset, view.byteOffset + view.byteLength);
      return remember(item, item instanceof DataView ? new DataView(buffer) : new view.constructor(buffer, 0, view.length ?? view.byteLength));
    }
    if (item instanceof Map) {
      const copy = remember(item, new Map());
      for (const [key, entry] of item) copy.set(clone(key), clone(entry));
      return copy;
    }
    if (item instanceof Set) {
      const copy = remember(item, new Set());
      for (const entry of item) copy.add(clone(entry));
      return copy;
    }
    if (Array.isArray(item)) {
      const copy = remember(item, new Array<unknown>(item.length));
      item.forEach((entry, i) => (copy[i] = clone(entry)));
      return copy;
    }
    const copy = remember(item, {} as Record<string, unknown>);
    for (const key of Object.keys(item)) Object.defineProperty(copy, key, { value: clone((item as Record<string, unknown>)[key]), enumerable: true, writable: true, configurable: true });
    return copy;
  };
  const remember = <C>(original: object, copy: C): C => {
    seen.set(original, copy);
    return copy;
  };
  return clone(value) as T;
}
