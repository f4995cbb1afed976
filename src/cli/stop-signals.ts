/**
 * Ctrl-C and SIGTERM for a long CLI command: the first of either aborts `signal`, so the command
 * stops, writes down what it has and says how to continue; the exit code is 128 + the signal's
 * number (130 for SIGINT, 143 for SIGTERM), as shells expect. A second one ends the process at once,
 * whatever the command is waiting for, after the command's last words (`beforeForcedExit`, e.g.
 * marking its metadata "interrupted"): a stop never depends on the code it stops.
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

/** What to do on a second stop signal: synchronous last words, and the exit (injected by tests). */
interface ForcedExit {
  beforeForcedExit?: () => void;
  exit?: (code: number) => void;
}

/** Listens for SIGINT and SIGTERM until disposed; the second one calls `beforeForcedExit` and exits. */
export function onStopSignal(forced: ForcedExit = {}): StopSignal {
  const controller = new AbortController();
  let received: 'SIGINT' | 'SIGTERM' | undefined;
  const onSignal = (name: 'SIGINT' | 'SIGTERM') => () => {
    if (controller.signal.aborted && received !== undefined) {
      console.error(`\n${name === 'SIGINT' ? 'Ctrl-C' : name} again: stopping now`);
      try {
        forced.beforeForcedExit?.();
      } finally {
        (forced.exit ?? process.exit)(received === 'SIGINT' ? 130 : 143);
      }
      return;
    }
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
