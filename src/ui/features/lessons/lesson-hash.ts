/**
 * Lesson links: `#lesson=<id>`, alone or beside a share link's fields (`#lesson=2&v=1&...`). A
 * lesson link only opens the lesson's text; nothing runs until the person presses Start lesson,
 * and what it loads is the lesson's own source, never code from the link.
 */

/** What a hash says about lessons: nothing, a lesson to open, or why its lesson cannot be opened. */
export type LessonHash = { kind: 'none' } | { kind: 'lesson'; id: number } | { kind: 'error'; message: string };

/** Reads the `lesson` field of a hash (with or without '#'); `knownIds` are the lessons that exist. */
export function parseLessonHash(hash: string, knownIds: readonly number[]): LessonHash {
  const text = hash.startsWith('#') ? hash.slice(1) : hash;
  const field = text.split('&').find((part) => part.startsWith('lesson='));
  if (field === undefined) return { kind: 'none' };
  const value = field.slice('lesson='.length);
  const range = knownIds.length > 0 ? `${Math.min(...knownIds)}–${Math.max(...knownIds)}` : 'none';
  if (!/^\d{1,4}$/.test(value))
    return { kind: 'error', message: `This lesson link is malformed ("lesson=${value.slice(0, 20)}"); it should name a lesson number (${range}). Open a lesson from the Lessons menu.` };
  const id = Number(value);
  if (!knownIds.includes(id)) return { kind: 'error', message: `There is no lesson ${id}; the lessons are ${range}. Open one from the Lessons menu.` };
  return { kind: 'lesson', id };
}

/** The hash of a lesson link. */
export function lessonHash(id: number): string {
  return `lesson=${id}`;
}
