/**
 * Which option of a segmented choice shows as chosen and which the keyboard reaches, as a pure
 * function (unit tested): an unavailable option is never chosen, even when the value names it, and
 * the arrow keys, Home and End skip it. No React here.
 */

/** An option as far as choosing goes: its value, and why it cannot be chosen here (if it cannot). */
export interface ChoosableOption<T extends string> {
  value: T;
  unavailable?: string;
}

/** The chosen option's index (-1 when none is: the value is unavailable or unknown), the indices that can be chosen, and the one Tab reaches. */
export function segmentedState<T extends string>(options: readonly ChoosableOption<T>[], value: T): { chosen: number; available: number[]; tabStop: number | undefined } {
  const available = options.map((option, index) => (option.unavailable === undefined ? index : -1)).filter((index) => index >= 0);
  const chosen = options.findIndex((option) => option.value === value && option.unavailable === undefined);
  return { chosen, available, tabStop: chosen >= 0 ? chosen : available[0] };
}

/** The index a key moves the choice to (arrows step through the available options, wrapping; Home and End jump to their ends), or undefined for another key. */
export function nextChoice(state: { chosen: number; available: number[] }, key: string): number | undefined {
  const { chosen, available } = state;
  if (available.length === 0) return undefined;
  const steps: Readonly<Record<string, number>> = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 };
  if (key === 'Home') return available[0];
  if (key === 'End') return available.at(-1);
  if (!(key in steps)) return undefined;
  const current = Math.max(available.indexOf(chosen), 0);
  return available[(current + steps[key]! + available.length) % available.length];
}
