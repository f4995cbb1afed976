/**
 * Words and series the run panel and the Training tab show for results, as pure functions (unit
 * tested): the errors line of a summary, the task's expected-answer chip of a rollout, which reward lines
 * a chart draws, counts with their noun and durations. No React here.
 */

/** Where an error came from, in words (RolloutErrorSource of src/envs/types.ts). */
const ERROR_PLACES: Record<string, string> = {
  client: 'in model calls',
  env: 'in environment code',
  reward: 'in reward functions',
  parser: 'in the parser',
};

/** The summary's errors line: "0 with errors", or e.g. "2 rollouts with errors: 2 errors in reward functions, 1 in model calls". */
export function errorsLine(rolloutsWithErrors: number, errorsBySource: Record<string, number>): string {
  if (rolloutsWithErrors === 0) return '0 with errors';
  const places = Object.entries(errorsBySource)
    .filter(([, count]) => count > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([source, count], index) => `${count}${index === 0 ? ` error${count === 1 ? '' : 's'}` : ''} ${ERROR_PLACES[source] ?? `from ${source}`}`);
  return `${rolloutsWithErrors} rollout${rolloutsWithErrors === 1 ? '' : 's'} with errors${places.length > 0 ? `: ${places.join(', ')}` : ''}`;
}

/** The chip of a task's reference answer (the dataset's `answer`, not the model's): labelled so it never reads as the reply, which may be empty. */
export function expectedAnswerChip(answer: string | undefined): string | null {
  return answer === undefined ? null : `expected answer: ${answer === '' ? '(empty)' : answer}`;
}

/**
 * The reward functions a reward chart draws beside the mean: a function whose line is the mean at
 * every step (the only function, weight 1) would hide under it, so it is named in the mean's label
 * instead; a function whose values leave [0, 1] (a count such as Wordle's guesses, about 4) would
 * flatten the 0–1 lines, so it gets a chart of its own (`ownScale`).
 */
export function rewardLines(steps: { reward: { mean: number }; rewards: Record<string, number> }[]): { meanLabel: string; functions: string[]; ownScale: string[] } {
  const names = [...new Set(steps.flatMap((step) => Object.keys(step.rewards)))];
  const same = names.filter((name) => steps.length > 0 && steps.every((step) => step.rewards[name] !== undefined && Math.abs(step.rewards[name] - step.reward.mean) < 1e-9));
  const others = names.filter((name) => !same.includes(name));
  const ownScale = others.filter((name) => steps.some((step) => step.rewards[name] !== undefined && (step.rewards[name] < 0 || step.rewards[name] > 1)));
  return { meanLabel: same.length > 0 ? `reward (= ${same.join(' = ')})` : 'reward', functions: others.filter((name) => !ownScale.includes(name)), ownScale };
}

/** The environment's reply after each model turn of a rollout (empty strings for a single-turn task), so a game reads turn by turn. */
export function environmentReplies(completion: readonly { role: string; content: string }[]): string[] {
  const replies: string[] = [];
  for (const message of completion) {
    if (message.role === 'assistant') replies.push('');
    else if (replies.length > 0) replies[replies.length - 1] = `${replies[replies.length - 1]}${replies[replies.length - 1] === '' ? '' : ' '}${message.content}`;
  }
  return replies;
}

/** A count with its noun, singular for one: "1 rollout", "2 rollouts" (`plural` for nouns not made with -s). */
export function countOf(count: number, noun: string, plural = `${noun}s`): string {
  return `${count} ${count === 1 ? noun : plural}`;
}

/** A duration for a progress line, rounded to whole seconds first so it never reads "41 min 60 s": "45 s", "2 min 5 s". */
export function durationText(seconds: number): string {
  const whole = Math.max(0, Math.ceil(seconds));
  return whole < 60 ? `${whole} s` : `${Math.floor(whole / 60)} min ${whole % 60} s`;
}
