/**
 * The open environment and the run panel's arguments, read from the store: a leaf of the UI's
 * actions, so the evaluation actions (actions.ts) and the training actions (training-actions.ts)
 * both use it without importing each other.
 */
import { errorMessage } from '../../../common/error-message.ts';
import type { SavedEnvironment } from './environment-storage.ts';
import { usePlayground } from '../../store/index.ts';

/** The environment open in the editor, if any. */
export function currentEnvironment(): SavedEnvironment | undefined {
  const { environments, currentId } = usePlayground.getState();
  return environments.find((item) => item.id === currentId);
}

/** Parses the environment-arguments JSON of the settings, or throws saying what is wrong. */
export function parseArgs(argsJson: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(argsJson || '{}');
  } catch (error) {
    throw new Error(`Environment arguments are not valid JSON: ${errorMessage(error)}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('Environment arguments must be a JSON object, e.g. {"numEvalTasks": 20}');
  return value as Record<string, unknown>;
}
