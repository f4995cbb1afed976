/**
 * Environment files written for the lessons (src/ui/features/lessons/sources/), as the editor shows them.
 * Each is a real module of this repository, type-checked with the app, importing the library by
 * relative path; `toLessonFacingSource` (lesson-facing-source.ts) rewrites those imports to the module names an environment
 * file uses ('tabrl', 'tabrl/builtin/<file>'), as builtins.ts does for the built-ins.
 */
import gullibleJudge from './sources/gullible-judge.ts?raw';
import parcelDesk from './sources/parcel-desk.ts?raw';
import { toLessonFacingSource } from './lesson-facing-source.ts';

/** The name of a lesson source. */
export type LessonSourceName = 'gullible-judge' | 'parcel-desk';

const RAW_SOURCES: Record<LessonSourceName, string> = {
  'gullible-judge': gullibleJudge,
  'parcel-desk': parcelDesk,
};

/** A lesson source as an environment file ('tabrl' imports). */
export function lessonSource(name: LessonSourceName): string {
  return toLessonFacingSource(RAW_SOURCES[name]);
}

/** The names of the lesson sources. */
export const LESSON_SOURCE_NAMES = Object.keys(RAW_SOURCES) as LessonSourceName[];
