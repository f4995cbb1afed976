/**
 * Ctrl-C and SIGTERM for a long CLI command: the first of either aborts `signal`, so the command
 * stops, writes down what it has and says how to continue; the exit code is 128 + the signal's
 * number (130 for SIGINT, 143 for SIGTERM), as shells expect.
 */

/** A stop request from the terminal or a process manager. */
export interface StopSignal {
  readonly signal: AbortSignal;
  /** The signal that arrived, if one did. */
  readonly received: 'SIGINT' | 'SIGTERM' | undefined;
  /** 130 after SIGINT, 143 after SIGTERM (1 when stopped for another reason). */
  readonly exitCode: number;
  /** Stops as if a signal had come (used when the command must stop for its own reasons). */
  abort(): void;
  /** Removes the signal handlers. */
  dispose(): void;
}

/** Listens for SIGINT and SIGTERM until disposed. */
export function onStopSignal(): StopSignal {
  const controller = new AbortController();
  let received: 'SIGINT' | 'SIGTERM' | undefined;
  const onSignal = (name: 'SIGINT' | 'SIGTERM') => () => {
    received ??= name;
    controller.abort();
  };
  const onInt = onSignal('SIGINT');
  const onTerm = onSignal('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  return {
    signal: controller.signal,
    get received() {
      return received;
    },
    get exitCode() {
      return received === 'SIGINT' ? 130 : received === 'SIGTERM' ? 143 : 1;
    },
    abort: () => controller.abort(),
    dispose: () => {
      process.removeListener('SIGINT', onInt);
      process.removeListener('SIGTERM', onTerm);
    },
  };
}
