/**
 * One 'abort' listener per AbortSignal however many callers wait on it: a run's signal is shared by
 * every rollout in flight (a GRPO step runs dozens), and one listener each would pass Node's limit of
 * 10 and print MaxListenersExceededWarning. It is not a signal of its own: it only fans one out.
 */

const handlersBySignal = new WeakMap<AbortSignal, Set<() => void>>();

/** Calls `handler` once when `signal` aborts; returns the function that stops it being called. */
export function onAbort(signal: AbortSignal, handler: () => void): () => void {
  let handlers = handlersBySignal.get(signal);
  if (!handlers) {
    const created = new Set<() => void>();
    handlers = created;
    handlersBySignal.set(signal, created);
    signal.addEventListener(
      'abort',
      () => {
        for (const waiting of [...created]) waiting();
        created.clear();
      },
      { once: true },
    );
  }
  const set = handlers;
  set.add(handler);
  return () => void set.delete(handler);
}
