/** docs/lessons.md, generated from the lessons table, so the teacher's copy and the app's say the same (a unit test compares them). */
import type { Lesson, LessonPreset } from './lessons.ts';

const POLICY_NAMES: Record<string, string> = { expert: 'scripted expert', endpoint: 'OpenAI-compatible endpoint', 'in-tab': 'in-tab model', webllm: 'WebLLM model' };

function presetLine(preset: LessonPreset): string {
  const environment =
    preset.environment.kind === 'builtin'
      ? `built-in \`${preset.environment.builtin}\``
      : `lesson source \`src/ui/features/lessons/sources/${preset.environment.source}.ts\`${preset.environment.expertFrom !== undefined ? ` (expert from \`${preset.environment.expertFrom}\`)` : ''}`;
  const policy = `${POLICY_NAMES[preset.policy] ?? preset.policy}${preset.policy === 'in-tab' ? ` \`${preset.inTabModel}\`` : `, in-tab model \`${preset.inTabModel}\` (for Warm up and Train)`}`;
  const settings = Object.entries(preset.evaluation)
    .map(([key, value]) => `${key} ${String(value)}`)
    .join(', ');
  const training = Object.entries(preset.training)
    .map(([key, value]) => `${key} ${String(value)}`)
    .join(', ');
  return [
    `- File: "${preset.fileName}", from the ${environment}, arguments \`${JSON.stringify(preset.args)}\``,
    `- Policy: ${policy}; mode: ${preset.mode}`,
    `- Evaluation settings: ${settings || 'the defaults'}`,
    `- Training settings: ${training || "the defaults (the default lesson's table, src/rl/lesson.ts)"}`,
  ].join('\n');
}

/** A step as a numbered list item: continuation lines indented under it. */
function stepItem(step: string, index: number): string {
  const [first, ...rest] = step.split('\n');
  return [`${index + 1}. ${first}`, ...rest.map((line) => (line === '' ? '' : `   ${line}`))].join('\n');
}

/** The whole file's text. */
export function lessonsMarkdown(lessons: readonly Lesson[]): string {
  const parts = [
    '# Lessons',
    '',
    '<!-- Generated from src/ui/features/lessons/lessons.ts; edit the table there, then run',
    '     TABRL_WRITE_LESSONS=1 npx vitest run --project unit test/unit/ui/lessons.test.ts -->',
    '',
    'Short lessons for a browser tutorial or a class. In the playground, choose one from the **Lessons** menu',
    'or open a link such as `#lesson=2`; the text appears beside the editor and **Start lesson** sets up the',
    'file, policy, mode and settings below (it runs nothing by itself). **Presenter** in the top bar turns on',
    'large type for a projector.',
  ];
  for (const lesson of lessons) {
    parts.push(
      '',
      `## Lesson ${lesson.id}: ${lesson.title}`,
      '',
      `*${lesson.goal}* Link: \`#lesson=${lesson.id}\``,
      '',
      'Preset:',
      '',
      presetLine(lesson.preset),
      '',
      ...lesson.steps.map((step, i) => stepItem(step, i)),
    );
  }
  return `${parts.join('\n')}\n`;
}
