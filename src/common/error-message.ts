/** One way to put a caught value into words, for every layer: a leaf module with no imports. */

/** The message of an Error, or the value as text (a thrown string, number or object). */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
