/**
 * The rule of Wordle's feedback, shared by the full and the compact game: a guess scored against
 * the secret as G (right letter, right spot), Y (elsewhere in the word) and X (no copies left).
 */

/** A word's feedback against the secret, as a G/Y/X string: greens consume letters first, then yellows left to right. */
export function scoreGuess(guess: string, secret: string): string {
  const marks: string[] = Array.from({ length: guess.length }, () => 'X');
  const unused = new Map<string, number>();
  for (let i = 0; i < guess.length; i++) {
    if (guess[i] === secret[i]) marks[i] = 'G';
    else unused.set(secret[i]!, (unused.get(secret[i]!) ?? 0) + 1);
  }
  for (let i = 0; i < guess.length; i++) {
    const left = unused.get(guess[i]!) ?? 0;
    if (marks[i] === 'G' || left === 0) continue;
    marks[i] = 'Y';
    unused.set(guess[i]!, left - 1);
  }
  return marks.join('');
}
