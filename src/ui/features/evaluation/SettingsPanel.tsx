/** Evaluation settings, each with a one-line explanation. */
import { usePlayground } from '../../store/index.ts';
import type { EvaluationSettings } from './evaluation-slice.ts';
import { NumberSetting, Setting, type NumberField } from '../../kit/Setting.tsx';

type NumericKey = Exclude<keyof EvaluationSettings, 'argsJson'>;

const NUMERIC: NumberField<NumericKey>[] = [
  { key: 'numTasks', label: 'Tasks', help: 'How many tasks of the evaluation set to run.', min: 1, max: 100000 },
  { key: 'rolloutsPerTask', label: 'Rollouts per task', help: 'Samples per task; pass@k uses them.', min: 1, max: 256 },
  { key: 'concurrency', label: 'Concurrency', help: 'Rollouts in flight at once.', min: 1, max: 64 },
  { key: 'maxTokens', label: 'Max tokens', help: 'Longest reply the model may write per turn.', min: 1, max: 131072 },
  { key: 'temperature', label: 'Temperature', help: '0 = always the likeliest token; higher = more varied.', min: 0, max: 2, step: 0.1 },
  { key: 'seed', label: 'Seed', help: 'Sampling seed (shared in links, so a run can be reproduced).', min: 0, max: 2147483647 },
  { key: 'timeLimitMs', label: 'Time limit (ms)', help: 'Environment code running longer without returning is stopped.', min: 100, max: 600000, step: 100 },
];

/** The settings card. */
export function SettingsPanel() {
  return (
    <section className="card" aria-labelledby="settings-heading">
      <h2 id="settings-heading">Settings</h2>
      <div className="settings-grid">
        {NUMERIC.map((field) => (
          <EvaluationNumber key={field.key} field={field} />
        ))}
      </div>
      <ArgsSetting />
    </section>
  );
}

function EvaluationNumber({ field }: { field: NumberField<NumericKey> }) {
  const value = usePlayground((state) => state.settings[field.key]);
  const setSettings = usePlayground((state) => state.setSettings);
  return <NumberSetting field={field} value={value} testId={`setting-${field.key}`} onChange={(number) => setSettings({ [field.key]: number })} />;
}

function ArgsSetting() {
  const argsJson = usePlayground((state) => state.settings.argsJson);
  const setSettings = usePlayground((state) => state.setSettings);
  return (
    <Setting label="Environment arguments (JSON)" help='Passed to loadEnvironment(args) of the open file, e.g. {"numEvalTasks": 20}; each file keeps its own.'>
      <input value={argsJson} spellCheck={false} data-testid="setting-args" onChange={(event) => setSettings({ argsJson: event.target.value })} />
    </Setting>
  );
}
