/**
 * A pause gate for a job that runs step by step: `pause()` closes it, `resume()` opens it, and the
 * job awaits `wait(signal)` between steps (and before each new rollout), which resolves at once when
 * the gate is open and otherwise when it opens or `signal` aborts (so Stop works while paused).
 * It holds no timer and touches no GPU: a paused job simply does not take its next step.
 */

/** An open/closed gate that steps wait on. */
export class PauseGate {
  private paused = false;
  private waiters = new Set<() => void>();

  /** Whether the gate is closed. */
  get isPaused(): boolean {
    return this.paused;
  }

  /** Closes the gate: the next `wait` holds until `resume`. */
  pause(): void {
    this.paused = true;
  }

  /** Opens the gate and lets every waiting step go on. */
  resume(): void {
    this.paused = false;
    const waiting = [...this.waiters];
    this.waiters.clear();
    for (const release of waiting) release();
  }

  /** Resolves when the gate is open, or as soon as `signal` aborts (the caller then sees the abort itself). */
  wait(signal?: AbortSignal): Promise<void> {
    if (!this.paused || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const release = () => {
        this.waiters.delete(release);
        signal?.removeEventListener('abort', release);
        resolve();
      };
      this.waiters.add(release);
      signal?.addEventListener('abort', release, { once: true });
    });
  }
}
