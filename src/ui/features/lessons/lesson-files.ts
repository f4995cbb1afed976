/** The environment file a lesson opens: its source (a built-in's, or a lesson source's) and the built-in whose expert it uses (none for a lesson source without an expert). */
import { BUILTINS } from '../environment/builtins.ts';
import { lessonSource } from './lesson-sources.ts';
import type { LessonPreset } from './lessons.ts';

/** The file of a preset; throws naming the built-in when this build lacks it. */
export function presetFile(preset: LessonPreset): { source: string; builtin?: string } {
  const { environment } = preset;
  if (environment.kind === 'source') return { source: lessonSource(environment.source), ...(environment.expertFrom !== undefined ? { builtin: environment.expertFrom } : {}) };
  const builtin = BUILTINS.find((item) => item.name === environment.builtin);
  if (!builtin) throw new Error(`The lesson's built-in "${environment.builtin}" is not in this build.`);
  return { source: builtin.source, builtin: builtin.name };
}
