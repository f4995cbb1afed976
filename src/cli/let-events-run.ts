/**
 * Work on the CPU backend (an SFT step, a local model decoding) resolves every promise at once, so a
 * run made only of it never leaves the microtask queue: signal handlers (Ctrl-C, SIGTERM) and timers
 * never get their turn. These helpers hand the event loop a turn at natural boundaries.
 */
import type { ChatClient } from '../envs/index.ts';

/** Resolves after the event loop has run the events waiting now (a Ctrl-C's handler among them). */
export function letEventsRun(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Makes every request of `client` first let the event loop run; returns the same client (its type, tokens and all, unchanged). */
export function lettingEventsRun<C extends ChatClient>(client: C): C {
  const completions = client.chat.completions;
  const create = completions.create.bind(completions);
  completions.create = async (request) => {
    await letEventsRun();
    return create(request);
  };
  return client;
}
