/** Warm-up and GRPO settings, rendered from the one table of training settings (src/rl/training-settings.ts): each knob's label, limits, help and default. */
import { describeDefault, KNOB_NAMES, knobOf, TRAINING_KNOBS, type ChoiceKnob, type KnobName, type NumberKnob, type SettingPhase, type SwitchKnob } from '../../../rl/training-settings.ts';
import { usePlayground } from '../../store/index.ts';
import type { TeacherKind } from '../policy/policy-slice.ts';
import { SegmentedChoice, type SegmentedOption } from '../../kit/SegmentedChoice.tsx';
import { NumberSetting, Setting } from '../../kit/Setting.tsx';
import { MemoryChoiceLine } from './MemoryChoiceLine.tsx';
import { PoolSynthesisSettings } from './PoolSynthesisSettings.tsx';

/** The rows the warm-up card shows: the warm-up's knobs of the table, where checkpoints go, and the GPU memory a step may use. */
const WARMUP: KnobName[] = [...knobsOf(['warm-up']), 'checkpointEvery', 'memoryBudget'];

/** The GRPO card's first rows: what a learner sets for every run. */
const GRPO_MAIN: KnobName[] = ['grpoSteps', 'tasksPerStep', 'groupSize', 'grpoLr', 'maxTokens', 'maxAsync', 'temperature', 'klBeta', 'checkpointEvery', 'memoryBudget'];

/** The objective's knobs a learner reaches for first (docs/training.md has them all, with when to use each). */
const OBJECTIVE: KnobName[] = ['lossType', 'scaleRewards', 'turnCredit', 'dynamicSampling', 'echoWeight'];

/** Every other knob the tab offers for GRPO, in the table's order. */
const GRPO_MORE: KnobName[] = knobsOf(['grpo', 'sampling', 'checkpoints']).filter((name) => !GRPO_MAIN.includes(name) && !OBJECTIVE.includes(name));

/** The knobs of the table in `phases` that the tab offers, in the table's order. */
function knobsOf(phases: SettingPhase[]): KnobName[] {
  return KNOB_NAMES.filter((name) => TRAINING_KNOBS[name].hosts === 'both' && phases.includes(TRAINING_KNOBS[name].phase));
}

/** The training settings card, for the Warm up or Train mode: one row per knob of the table (src/rl/training-settings.ts). */
export function TrainingSettingsPanel({ mode }: { mode: 'warmup' | 'train' }) {
  return (
    <section className="card" aria-labelledby="training-settings-heading">
      <h2 id="training-settings-heading">{mode === 'warmup' ? 'Warm-up settings' : 'GRPO settings'}</h2>
      {mode === 'warmup' && <TeacherPicker />}
      <div className="settings-grid">
        {(mode === 'warmup' ? WARMUP : GRPO_MAIN).map((name) => (
          <KnobSetting key={name} name={name} />
        ))}
      </div>
      {mode === 'train' && <MemoryChoiceLine />}
      {mode === 'train' && (
        <>
          <h3 className="settings-subheading">Objective</h3>
          <div className="settings-grid" data-testid="grpo-objective">
            {OBJECTIVE.map((name) => (
              <KnobSetting key={name} name={name} />
            ))}
          </div>
          <details className="settings-more" data-testid="grpo-more">
            <summary>More GRPO settings</summary>
            <div className="settings-grid">
              {GRPO_MORE.map((name) => (
                <KnobSetting key={name} name={name} />
              ))}
            </div>
          </details>
          <PoolSynthesisSettings />
        </>
      )}
    </section>
  );
}

const TEACHERS: SegmentedOption<TeacherKind>[] = [
  { value: 'expert', label: 'Built-in expert' },
  { value: 'endpoint', label: 'Endpoint' },
  { value: 'webllm', label: 'WebLLM model' },
];

/** Who makes the warm-up's demonstrations; the in-tab model is always the student. */
function TeacherPicker() {
  const teacher = usePlayground((state) => state.teacher);
  const setTeacher = usePlayground((state) => state.setTeacher);
  const model = usePlayground((state) => state.model);
  const webllmModel = usePlayground((state) => state.webllmModel);
  return (
    <div className="fields">
      <span className="setting-label" id="teacher-label">
        Teacher
      </span>
      <SegmentedChoice options={TEACHERS} value={teacher} onChange={setTeacher} labelledBy="teacher-label" testIdPrefix="teacher" />
      <p className="hint" data-testid="teacher-hint">
        {teacher === 'expert' &&
          "The built-in's scripted expert answers every task (for tasks planted backwards, each task's planted calls, then its answer); its passing rollouts are the demonstrations."}
        {teacher === 'endpoint' && (
          <>
            The endpoint's model <b>{model}</b> (set under Policy) rolls out the tasks; only rollouts that pass the environment's threshold are kept.
          </>
        )}
        {teacher === 'webllm' && (
          <>
            WebLLM <b>{webllmModel}</b> (picked under Policy, loaded on first use) rolls out the tasks, one at a time; only passing rollouts are kept.
          </>
        )}{' '}
        The in-tab model is the student.
      </p>
    </div>
  );
}

/** One knob's row, rendered from its row of the table: a number input, a choice or a switch. */
function KnobSetting({ name }: { name: KnobName }) {
  const knob = knobOf(name);
  if (knob.kind === 'choice') return <KnobChoice name={name} knob={knob} />;
  if (knob.kind === 'switch') return <KnobSwitch name={name} knob={knob} />;
  return <KnobNumber name={name} knob={knob} />;
}

function KnobNumber({ name, knob }: { name: KnobName; knob: NumberKnob }) {
  const value = usePlayground((state) => state.trainingSettings[name]) as number | null;
  const setTrainingSettings = usePlayground((state) => state.setTrainingSettings);
  const step = knob.step ?? 1;
  // An exclusive lower bound (a learning rate above 0) becomes the smallest value a typed number is clamped to.
  const min = knob.minExclusive ? knob.min + 1e-7 : knob.min;
  const field = {
    key: name,
    label: knob.label,
    help: `${capitalized(knob.help)}.${knob.default === null ? ` Empty: ${describeDefault(knob)}.` : ''}`,
    min,
    max: knob.max ?? Number.MAX_SAFE_INTEGER,
    step,
  };
  if (knob.default === null) {
    return (
      <Setting label={field.label} help={field.help}>
        <input
          type="number"
          data-testid={`train-${name}`}
          value={value ?? ''}
          placeholder="default"
          min={field.min}
          max={field.max}
          step={step}
          onChange={(event) => {
            const number = Number(event.target.value);
            if (event.target.value === '') setTrainingSettings({ [name]: null });
            else if (Number.isFinite(number)) setTrainingSettings({ [name]: Math.min(field.max, Math.max(field.min, number)) });
          }}
        />
      </Setting>
    );
  }
  return <NumberSetting field={field} value={value ?? 0} testId={`train-${name}`} onChange={(number) => setTrainingSettings({ [name]: number })} />;
}

function KnobChoice({ name, knob }: { name: KnobName; knob: ChoiceKnob }) {
  const value = usePlayground((state) => state.trainingSettings[name]) as string;
  const setTrainingSettings = usePlayground((state) => state.setTrainingSettings);
  const chosen = knob.choices.find((choice) => choice.value === value);
  return (
    <Setting label={knob.label} help={`${capitalized(knob.help)}${chosen ? `: ${chosen.help}` : ''}.`}>
      <select data-testid={`train-${name}`} value={value} onChange={(event) => setTrainingSettings({ [name]: event.target.value })}>
        {knob.choices.map((choice) => (
          <option key={choice.value} value={choice.value}>
            {choice.value === knob.default ? `${choice.value} (default)` : choice.value}
          </option>
        ))}
      </select>
    </Setting>
  );
}

function KnobSwitch({ name, knob }: { name: KnobName; knob: SwitchKnob }) {
  const on = usePlayground((state) => state.trainingSettings[name]) as boolean;
  const setTrainingSettings = usePlayground((state) => state.setTrainingSettings);
  return (
    <Setting label={knob.label} help={`${capitalized(knob.help)}.`}>
      <span className="setting-check">
        <input type="checkbox" data-testid={`train-${name}`} checked={on} onChange={(event) => setTrainingSettings({ [name]: event.target.checked })} />
        {on ? 'on' : 'off'}
      </span>
    </Setting>
  );
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
