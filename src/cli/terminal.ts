/** Terminal output for the CLI: a progress bar on a TTY and the evaluation summary table. */
import type { EvaluationSummary } from '../envs/index.ts';

/** A one-line progress bar on stderr; silent when stderr is not a terminal. */
export class ProgressBar {
  private readonly started = Date.now();
  private readonly enabled = process.stderr.isTTY === true;

  constructor(
    private readonly total: number,
    private readonly label: string,
  ) {}

  /** Redraws the bar with `done` of `total` finished and a short status text. */
  update(done: number, status = ''): void {
    if (!this.enabled) return;
    const width = 28;
    const filled = Math.round((done / this.total) * width);
    const elapsed = (Date.now() - this.started) / 1000;
    const eta = done > 0 ? (elapsed / done) * (this.total - done) : Number.NaN;
    const line = `${this.label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${this.total} ${formatSeconds(elapsed)} elapsed${Number.isFinite(eta) ? `, eta ${formatSeconds(eta)}` : ''} ${status}`;
    process.stderr.write(`\r${line.slice(0, (process.stderr.columns ?? 120) - 1)}\x1b[K`);
  }

  /** Clears the bar's line. */
  finish(): void {
    if (this.enabled) process.stderr.write('\r\x1b[K');
  }
}

/** The summary as an aligned text table. */
export function formatSummary(summary: EvaluationSummary, weights: Record<string, number>): string {
  const rows: [string, string][] = [
    ['rollouts', `${summary.numRollouts} (${summary.numTasks} tasks × ${summary.rolloutsPerTask})`],
    ['reward', `${fixed(summary.reward.mean)} ± ${fixed(summary.reward.std)}`],
    ...Object.entries(summary.scores).map(([name, value]): [string, string] => [`  ${name} (w=${weights[name] ?? '?'})`, scoreText(summary, name, value)]),
    ['pass rate', fixed(summary.passRate)],
    ...Object.entries(summary.passAtK).map(([k, value]): [string, string] => [`pass@${k}`, fixed(value)]),
    [
      'errors',
      summary.rolloutsWithErrors === 0
        ? '0'
        : `${summary.rolloutsWithErrors} rollouts (${Object.entries(summary.errorsBySource)
            .map(([source, n]) => `${source}: ${n}`)
            .join(', ')})`,
    ],
    ...Object.entries(summary.firstErrors ?? {}).map(([kind, message]): [string, string] => [`  first ${kind}`, message.length > 300 ? `${message.slice(0, 300)}…` : message]),
    ['truncated', String(summary.truncated)],
    [
      'mean rollout',
      `${formatSeconds(summary.timings.meanRolloutMs / 1000)} (model ${formatSeconds(summary.timings.meanGenerationMs / 1000)}, scoring ${formatSeconds(summary.timings.meanScoringMs / 1000)})`,
    ],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  return rows.map(([label, value]) => `${label.padEnd(width)}  ${value}`).join('\n');
}

/** A function's mean; when it gave no score on some rollouts, also how many and its mean over the scored ones. */
function scoreText(summary: EvaluationSummary, name: string, value: number): string {
  const unscored = summary.unscored?.[name] ?? 0;
  if (unscored === 0) return fixed(value);
  const scored = summary.numRollouts - unscored;
  return `${fixed(value)} counting ${unscored} unscored rollout${unscored === 1 ? '' : 's'} as 0; ${scored === 0 ? 'no rollout was scored' : `${fixed(summary.scoredMeans?.[name] ?? 0)} over the ${scored} scored`}`;
}

function fixed(value: number): string {
  return value.toFixed(3);
}

function formatSeconds(seconds: number): string {
  if (seconds < 1) return `${Math.round(seconds * 1000)} ms`;
  if (seconds < 120) return `${seconds.toFixed(1)} s`;
  return `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
}
