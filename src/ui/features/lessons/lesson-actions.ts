/**
 * Start lesson: applies a lesson's preset. It opens the lesson's environment file (a saved copy of
 * a built-in's or a lesson source, created the first time and reopened after, so the learner's
 * edits are kept), then sets the arguments, evaluation and training settings, the in-tab model,
 * the policy and the mode. It runs no code: the learner presses Evaluate / Start. (Choosing the
 * in-tab policy starts the engine, which loads the chosen model: a real one downloads, or comes
 * from the browser's cache.)
 */
import { openEnvironment } from '../environment/environment-actions.ts';
import { choosePolicy } from '../policy/policy-actions.ts';
import { chooseInTabModel } from '../models/model-actions.ts';
import * as storage from '../environment/environment-storage.ts';
import { usePlayground } from '../../store/index.ts';
import { DEFAULT_SETTINGS } from '../evaluation/evaluation-slice.ts';
import { DEFAULT_TRAINING_SETTINGS } from '../training/training-slice.ts';
import { finishedResultsCleared } from '../../store/finished-results.ts';
import { newRun } from '../training/training-actions.ts';
import { presetFile } from './lesson-files.ts';
import { openLessonFromHash } from './lesson-state.ts';
import type { Lesson } from './lessons.ts';
import { isBusy } from '../../store/selectors.ts';

/** Applies the lesson's preset; returns a sentence saying what it set up (or throws saying why it could not). */
export async function startLesson(lesson: Lesson): Promise<string> {
  const state = usePlayground.getState();
  if (isBusy(state)) throw new Error('A run is in progress. Stop it (or let it finish), then press Start lesson again.');
  const { preset } = lesson;
  const file = presetFile(preset);
  const existing = state.environments.find((item) => item.name === preset.fileName);
  if (existing) {
    openEnvironment(existing.id);
  } else {
    const environment: storage.SavedEnvironment = {
      id: `env-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`,
      name: preset.fileName,
      source: file.source,
      ...(file.builtin !== undefined ? { builtin: file.builtin } : {}),
      updatedAt: Date.now(),
    };
    await storage.putEnvironment(environment);
    usePlayground.getState().upsertEnvironment(environment);
    openEnvironment(environment.id);
  }
  const store = usePlayground.getState();
  store.setSettings({ ...DEFAULT_SETTINGS, ...preset.evaluation, argsJson: JSON.stringify(preset.args) });
  store.setTrainingSettings({ ...DEFAULT_TRAINING_SETTINGS, ...preset.training });
  chooseInTabModel(preset.inTabModel);
  choosePolicy(preset.policy);
  store.setMode(preset.mode);
  return `${existing ? 'Reopened' : 'Opened'} "${preset.fileName}"${existing ? ' (with your edits)' : ''}, policy ${POLICY_LABELS[preset.policy] ?? preset.policy}${preset.policy === 'in-tab' ? ` (${preset.inTabModel})` : `, in-tab model ${preset.inTabModel} (for Warm up and Train)`}, mode ${MODE_LABELS[preset.mode]}. Nothing runs until you press the button in the run panel.`;
}

const POLICY_LABELS: Record<string, string> = { expert: 'scripted expert', endpoint: 'endpoint', 'in-tab': 'in-tab model' };
const MODE_LABELS = { evaluate: 'Evaluate', warmup: 'Warm up', train: 'Train' } as const;

/**
 * Follows a `#lesson=` link (on load or a hash change): opens its lesson, and when it replaces
 * another open lesson, sets that lesson's finished evaluation and training run aside (the run stays
 * in the Runs tab), so the new lesson does not start under the last one's numbers. Work under way is
 * left alone.
 */
export function followLessonLink(hash: string): void {
  const before = usePlayground.getState().lessonView.openLessonId;
  openLessonFromHash(hash);
  const after = usePlayground.getState().lessonView.openLessonId;
  if (before === null || after === null || after === before || isBusy(usePlayground.getState())) return;
  usePlayground.setState(finishedResultsCleared(usePlayground.getState()));
  newRun();
}
