/** Warm-up and GRPO hyperparameters, each with a one-line explanation; defaults suit the tiny model on the default lesson. */
import { usePlayground } from '../../store/index.ts';
import type { TeacherKind } from '../policy/policy-slice.ts';
import { SegmentedChoice, type SegmentedOption } from '../../kit/SegmentedChoice.tsx';
import type { TrainingSettings } from './training-slice.ts';
import { NumberSetting, Setting, type NumberField } from '../../kit/Setting.tsx';

/** The settings that are numbers. */
type NumberKey = { [K in keyof TrainingSettings]: TrainingSettings[K] extends number ? K : never }[keyof TrainingSettings];

type Field = NumberField<NumberKey>;

/** A setting chosen from a few named options, each option explained. */
type ChoiceField = { key: 'lossType' | 'scaleRewards' | 'turnCredit'; label: string; help: string; options: { value: string; label: string; help: string }[] };

/** The GRPO objective's knobs a learner reaches for first (docs/training.md has them all, with when to use each). */
const OBJECTIVE: ChoiceField[] = [
  {
    key: 'lossType',
    label: 'Loss type',
    help: "How the loss of the step's tokens is averaged.",
    options: [
      { value: 'dapo', label: 'dapo (default)', help: 'Every sampled token of the step counts alike: long answers are not diluted.' },
      { value: 'bnpo', label: 'bnpo', help: 'Like dapo, averaged per micro-batch (the same with one micro-batch).' },
      { value: 'grpo', label: 'grpo', help: "Each answer's tokens are averaged first: a token of a long answer weighs less (DeepSeekMath)." },
      { value: 'dr_grpo', label: 'dr_grpo', help: 'Divides by a constant (answers × max tokens): no length bias at all (Dr. GRPO).' },
    ],
  },
  {
    key: 'scaleRewards',
    label: 'Reward scaling',
    help: 'After subtracting the group mean, advantages are divided by…',
    options: [
      { value: 'none', label: 'none (default)', help: 'Nothing: tasks the model nearly always or never solves do not get inflated (Dr. GRPO).' },
      { value: 'group', label: 'group std', help: "The group's reward std, as the original GRPO: every task pushes equally hard." },
      { value: 'batch', label: 'batch std', help: "The whole step's reward std: one scale for all tasks, robust to tiny groups." },
    ],
  },
  {
    key: 'turnCredit',
    label: 'Turn credit',
    help: "Only when the rubric scores each turn (addTurnReward): a turn's tokens get the answer's advantage plus…",
    options: [
      { value: 'return-to-go', label: 'return-to-go (default)', help: "Its own and every later turn's score, minus the group's mean turn score (DeepSeekMath's process rewards)." },
      { value: 'turn', label: 'own turn', help: "Its own turn's score only, minus the group's mean: when a turn's score depends on that move alone." },
    ],
  },
];

const ECHO: Field = {
  key: 'echoWeight',
  label: 'ECHO weight λ',
  help: "Multi-turn: also learn to predict the environment's replies (an SFT loss on them, weight λ); 0 = off.",
  min: 0,
  max: 10,
  step: 0.05,
};

const WARMUP: Field[] = [
  { key: 'demonstrations', label: 'Demonstrations', help: 'Teacher rollouts made; only passing ones are kept.', min: 1, max: 10000 },
  { key: 'sftSteps', label: 'SFT steps', help: 'Optimizer steps on the demonstrations.', min: 1, max: 100000 },
  { key: 'sftBatchSize', label: 'SFT batch', help: 'Transcripts per step.', min: 1, max: 256 },
  { key: 'sftLr', label: 'SFT learning rate', help: 'AdamW step size; a tiny model from scratch takes ~3e-3.', min: 1e-6, max: 1, step: 0.0001 },
];

const GRPO: Field[] = [
  { key: 'grpoSteps', label: 'GRPO steps', help: 'Updates; each samples and scores a fresh batch.', min: 1, max: 100000 },
  { key: 'tasksPerStep', label: 'Tasks per step', help: 'Training tasks sampled each step.', min: 1, max: 256 },
  { key: 'groupSize', label: 'Group size G', help: 'Answers per task; advantage = reward − group mean.', min: 2, max: 64 },
  { key: 'grpoLr', label: 'GRPO learning rate', help: "Smaller than SFT's: RL signal is noisy.", min: 1e-7, max: 1, step: 0.0001 },
  { key: 'maxTokens', label: 'Max tokens', help: 'Longest answer sampled per turn.', min: 1, max: 4096 },
  { key: 'maxAsync', label: 'Max async', help: 'Steps rollouts may run ahead of the weights (0 = on-policy).', min: 0, max: 8 },
  { key: 'temperature', label: 'Temperature', help: 'Sampling temperature of the rollouts (1 = the model as is).', min: 0.1, max: 2, step: 0.1 },
  { key: 'klBeta', label: 'KL β', help: 'Pulls the policy toward the model GRPO starts from (LoRA off, or a frozen copy); 0 = no penalty.', min: 0, max: 10, step: 0.01 },
  { key: 'checkpointEvery', label: 'Checkpoint every', help: 'Steps between saved weights (also saved at stop).', min: 1, max: 10000 },
];

/** The training settings card, for the Warm up or Train mode. */
export function TrainingSettingsPanel({ mode }: { mode: 'warmup' | 'train' }) {
  const fields = mode === 'warmup' ? [...WARMUP, GRPO[GRPO.length - 1]!] : GRPO;
  return (
    <section className="card" aria-labelledby="training-settings-heading">
      <h2 id="training-settings-heading">{mode === 'warmup' ? 'Warm-up settings' : 'GRPO settings'}</h2>
      {mode === 'warmup' && <TeacherPicker />}
      <div className="settings-grid">
        {fields.map((field) => (
          <TrainingInput key={field.key} field={field} />
        ))}
      </div>
      {mode === 'train' && (
        <>
          <h3 className="settings-subheading">Objective</h3>
          <div className="settings-grid" data-testid="grpo-objective">
            {OBJECTIVE.map((field) => (
              <TrainingChoice key={field.key} field={field} />
            ))}
            <DynamicSamplingToggle />
            <TrainingInput field={ECHO} />
          </div>
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
        {teacher === 'expert' && "The built-in's scripted expert answers every task; its passing rollouts are the demonstrations."}
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

function TrainingInput({ field }: { field: Field }) {
  const value = usePlayground((state) => state.trainingSettings[field.key]);
  const setTrainingSettings = usePlayground((state) => state.setTrainingSettings);
  return <NumberSetting field={field} value={value} testId={`train-${field.key}`} onChange={(number) => setTrainingSettings({ [field.key]: number })} />;
}

function TrainingChoice({ field }: { field: ChoiceField }) {
  const value = usePlayground((state) => state.trainingSettings[field.key]);
  const setTrainingSettings = usePlayground((state) => state.setTrainingSettings);
  const chosen = field.options.find((option) => option.value === value);
  return (
    <Setting label={field.label} help={`${field.help} ${chosen?.help ?? ''}`}>
      <select data-testid={`train-${field.key}`} value={value} onChange={(event) => setTrainingSettings({ [field.key]: event.target.value } as Partial<TrainingSettings>)}>
        {field.options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
    </Setting>
  );
}

function DynamicSamplingToggle() {
  const on = usePlayground((state) => state.trainingSettings.dynamicSampling);
  const setTrainingSettings = usePlayground((state) => state.setTrainingSettings);
  return (
    <Setting
      label="Dynamic sampling"
      help="When every answer to a task gets the same reward there is nothing to learn from it; on, such tasks are replaced by fresh ones (up to 3× the tasks per step), so each step keeps its learning signal (DAPO)."
    >
      <span className="setting-check">
        <input type="checkbox" data-testid="train-dynamicSampling" checked={on} onChange={(event) => setTrainingSettings({ dynamicSampling: event.target.checked })} />
        {on ? 'on' : 'off'}
      </span>
    </Setting>
  );
}
