/**
 * The charts' one palette: the colour of each line by its position, shared by the Training tab's
 * charts and the Runs tab's comparison so that a colour means the same kind of place everywhere.
 */

/** Line colours, in the order lines take them (blue, red, green, amber, purple, teal, slate, orange). */
export const CHART_COLORS: readonly string[] = ['#2457d6', '#c0392b', '#1f8a4c', '#a76300', '#7b3fb5', '#0e7c86', '#5d6b7a', '#d35400'];

/** The colour of line `index` (0-based), starting over after the palette's last colour. */
export function chartColor(index: number): string {
  return CHART_COLORS[index % CHART_COLORS.length]!;
}
