/** Finds the known name a mistyped one most likely meant (a command, a flag), for "did you mean …?" messages. */

/** Edit distance between two strings, counting a swap of neighbours as one edit (optimal string alignment). */
export function editDistance(a: string, b: string): number {
  // d[i][j]: edits to turn a[0..i) into b[0..j).
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/** The candidate closest to `word` (case-insensitive), or undefined when none is close enough to be a likely typo. */
export function closestName(word: string, candidates: readonly string[]): string | undefined {
  const typed = word.toLowerCase();
  // A prefix ("--step" for "--steps") or a couple of edits, more for long names.
  const prefixed = candidates.filter((name) => typed.length >= 3 && name.toLowerCase().startsWith(typed));
  if (prefixed.length === 1) return prefixed[0];
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const name of candidates) {
    const distance = editDistance(typed, name.toLowerCase());
    if (distance < bestDistance) [best, bestDistance] = [name, distance];
  }
  const allowed = Math.max(1, Math.min(3, Math.floor(typed.length / 3)));
  return bestDistance <= allowed ? best : undefined;
}
