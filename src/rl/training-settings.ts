/**
 * The one table of training settings: every knob of a training run once, with its name (the key
 * the tab's store and lessons use, and the `tabrl train` flag), its default, its limits, a line of
 * help, its kind and unit, and the phase it belongs to. The CLI parses its flags and writes its
 * `--help` from it, the tab's settings panel renders from it, lessons are rows of overrides of it
 * (src/rl/lesson.ts), and training-options.ts turns a row of values into the trainers' options.
 * It holds data and checks only: no trainer, no flag parser, no component.
 */
import type { RewardScaling, TurnCredit } from './advantages.ts';
import type { LossType } from './grpo-trainer.ts';

/** Where a knob acts: the phase it tunes, or the resource it spends. */
export type SettingPhase = 'warm-up' | 'grpo' | 'sampling' | 'measurements' | 'memory' | 'checkpoints' | 'run';

/** Which hosts offer a knob: both (`tabrl train` and the tab's panel), or the CLI only (the tab chooses these itself or has no use for them, e.g. the seed and the measurements). */
export type SettingHosts = 'both' | 'cli';

interface KnobBase {
  /** The flag of `tabrl train`, without its dashes. */
  flag: string;
  /** The label of the panel's row. */
  label: string;
  /** One line of help, shown by `--help` and under the panel's control. */
  help: string;
  phase: SettingPhase;
  hosts: SettingHosts;
  /** The flag's value placeholder in `--help` (e.g. LR, N). */
  metavar?: string;
  /** The allowed values as an error says them, when plainer than the bounds (e.g. "is a share of the tokens, in (0, 1]"). */
  mustBe?: string;
}

/** A numeric knob; `default: null` means "not set": the trainer chooses (said by `defaultText`). */
export interface NumberKnob extends KnobBase {
  kind: 'integer' | 'number';
  default: number | null;
  /** The smallest value allowed (inclusive, unless `minExclusive`). */
  min: number;
  minExclusive?: boolean;
  /** The largest value allowed (inclusive); absent: no bound. */
  max?: number;
  /** The panel's input step (default 1). */
  step?: number;
  /** The unit of the value, where it has one (MiB, steps). */
  unit?: string;
  /** How `--help` says the default when it is not a plain value (e.g. "3 × --tasks-per-step"). */
  defaultText?: string;
}

/** A knob chosen from named options. */
export interface ChoiceKnob extends KnobBase {
  kind: 'choice';
  default: string;
  choices: readonly { value: string; help: string }[];
}

/** An on/off knob (a flag without a value; given means on). */
export interface SwitchKnob extends KnobBase {
  kind: 'switch';
  default: false;
}

/** One row of the table. */
export type Knob = NumberKnob | ChoiceKnob | SwitchKnob;

const LOSS_TYPE_CHOICES: readonly { value: LossType; help: string }[] = [
  { value: 'dapo', help: 'every sampled token of the step counts alike: long answers are not diluted' },
  { value: 'bnpo', help: 'like dapo, averaged per micro-batch (the same with one micro-batch)' },
  { value: 'grpo', help: "each answer's tokens are averaged first: a token of a long answer weighs less (DeepSeekMath)" },
  { value: 'dr_grpo', help: 'divides by a constant (answers × max tokens): no length bias at all (Dr. GRPO)' },
];

const SCALE_REWARDS_CHOICES: readonly { value: RewardScaling; help: string }[] = [
  { value: 'group', help: "the group's reward std, as the original GRPO: every task pushes equally hard" },
  { value: 'batch', help: "the whole step's reward std: one scale for all tasks, robust to tiny groups" },
  { value: 'none', help: 'nothing: tasks the model nearly always or never solves do not get inflated (Dr. GRPO)' },
];

const TURN_CREDIT_CHOICES: readonly { value: TurnCredit; help: string }[] = [
  { value: 'return-to-go', help: "its own and every later turn's score, minus the group's mean turn score (DeepSeekMath's process rewards)" },
  { value: 'turn', help: "its own turn's score only, minus the group's mean: when a turn's score depends on that move alone" },
];

/**
 * The knobs, in the order `--help` and the panel show them. The GRPO learning rate's one default
 * is 5e-4: the default lesson's measured rate (nano, full fine-tuning, BENCHMARKS.md "The default
 * lesson: nano or tiny"), which the tab always started from; the trainer's 1e-5 (a large model's
 * full fine-tuning rate) moved nothing on the small models this project trains, and the CLI's
 * 1e-3 was never measured against it. A lesson that needs another rate says so in its row
 * (lesson 6: 2e-4).
 */
export const TRAINING_KNOBS = {
  demonstrations: {
    flag: 'demonstrations',
    label: 'Demonstrations',
    help: 'teacher (expert) rollouts made for warm-up data; only passing ones are kept',
    phase: 'warm-up',
    hosts: 'both',
    kind: 'integer',
    default: 256,
    min: 1,
    max: 100000,
    metavar: 'N',
  },
  sftSteps: {
    flag: 'sft-steps',
    label: 'SFT steps',
    help: 'SFT warm-up steps (0 skips the warm-up)',
    phase: 'warm-up',
    hosts: 'both',
    kind: 'integer',
    default: 100,
    min: 0,
    max: 100000,
    metavar: 'K',
  },
  sftBatchSize: { flag: 'sft-batch', label: 'SFT batch', help: 'transcripts per SFT step', phase: 'warm-up', hosts: 'both', kind: 'integer', default: 16, min: 1, max: 256, metavar: 'N' },
  sftLr: {
    flag: 'sft-lr',
    label: 'SFT learning rate',
    help: 'AdamW step size of the warm-up; a tiny model from scratch takes ~3e-3',
    phase: 'warm-up',
    hosts: 'both',
    kind: 'number',
    default: 3e-3,
    min: 0,
    minExclusive: true,
    max: 1,
    step: 0.0001,
    metavar: 'LR',
  },
  grpoSteps: {
    flag: 'steps',
    label: 'GRPO steps',
    help: 'GRPO updates, each on a fresh batch of rollouts (0 skips GRPO)',
    phase: 'grpo',
    hosts: 'both',
    kind: 'integer',
    default: 50,
    min: 0,
    max: 100000,
    metavar: 'N',
  },
  tasksPerStep: {
    flag: 'tasks-per-step',
    label: 'Tasks per step',
    help: 'training tasks sampled each GRPO step',
    phase: 'grpo',
    hosts: 'both',
    kind: 'integer',
    default: 4,
    min: 1,
    max: 256,
    metavar: 'B',
  },
  groupSize: {
    flag: 'group',
    label: 'Group size G',
    help: 'answers per task; advantage = reward − group mean',
    phase: 'grpo',
    hosts: 'both',
    kind: 'integer',
    default: 8,
    min: 2,
    max: 64,
    metavar: 'G',
  },
  grpoLr: {
    flag: 'lr',
    label: 'GRPO learning rate',
    help: "AdamW step size of GRPO; smaller than SFT's, the RL signal is noisy",
    phase: 'grpo',
    hosts: 'both',
    kind: 'number',
    default: 5e-4,
    min: 0,
    minExclusive: true,
    max: 1,
    step: 0.0001,
    metavar: 'LR',
  },
  lrWarmup: {
    flag: 'lr-warmup',
    label: 'LR warm-up',
    help: 'GRPO steps of linear learning-rate warm-up',
    phase: 'grpo',
    hosts: 'both',
    kind: 'integer',
    default: 0,
    min: 0,
    max: 100000,
    unit: 'steps',
    metavar: 'N',
  },
  lrSchedule: {
    flag: 'lr-schedule',
    label: 'LR schedule',
    help: 'the GRPO learning rate after warm-up',
    phase: 'grpo',
    hosts: 'both',
    kind: 'choice',
    default: 'constant',
    choices: [
      { value: 'constant', help: 'stays at the learning rate' },
      { value: 'cosine', help: 'decays to 0.1 × the learning rate by the last step' },
    ],
    metavar: 'K',
  },
  maxAsync: {
    flag: 'max-async',
    label: 'Max async',
    help: 'GRPO steps rollouts may run ahead of the weights (0 = on-policy)',
    phase: 'grpo',
    hosts: 'both',
    kind: 'integer',
    default: 1,
    min: 0,
    max: 8,
    metavar: 'K',
  },
  klBeta: {
    flag: 'kl-beta',
    label: 'KL β',
    help: 'KL penalty toward the model GRPO starts from (LoRA: the base, adapters off; full fine-tuning: a frozen copy); 0 = none',
    phase: 'grpo',
    hosts: 'both',
    kind: 'number',
    default: 0,
    min: 0,
    max: 10,
    step: 0.01,
    metavar: 'B',
  },
  lossType: {
    flag: 'loss-type',
    label: 'Loss type',
    help: "how the loss of the step's tokens is averaged",
    phase: 'grpo',
    hosts: 'both',
    kind: 'choice',
    default: 'dapo',
    choices: LOSS_TYPE_CHOICES,
    metavar: 'T',
  },
  scaleRewards: {
    flag: 'scale-rewards',
    label: 'Reward scaling',
    help: 'after subtracting the group mean, advantages are divided by',
    phase: 'grpo',
    hosts: 'both',
    kind: 'choice',
    default: 'none',
    choices: SCALE_REWARDS_CHOICES,
    metavar: 'S',
  },
  turnCredit: {
    flag: 'turn-credit',
    label: 'Turn credit',
    help: "only when the rubric scores each turn (addTurnReward): a turn's tokens get the answer's advantage plus",
    phase: 'grpo',
    hosts: 'both',
    kind: 'choice',
    default: 'return-to-go',
    choices: TURN_CREDIT_CHOICES,
    metavar: 'C',
  },
  importanceSampling: {
    flag: 'importance-sampling',
    label: 'Importance sampling',
    help: 'PPO ratios per token, or one per sequence (GSPO)',
    phase: 'grpo',
    hosts: 'both',
    kind: 'choice',
    default: 'token',
    choices: [
      { value: 'token', help: 'one ratio per token' },
      { value: 'sequence', help: 'one length-normalised ratio per answer (GSPO)' },
    ],
    metavar: 'L',
  },
  clipLow: { flag: 'clip-low', label: 'Clip ε low', help: 'lower PPO clip ε', phase: 'grpo', hosts: 'both', kind: 'number', default: 0.2, min: 0, max: 10, step: 0.01, metavar: 'E' },
  clipHigh: {
    flag: 'clip-high',
    label: 'Clip ε high',
    help: "upper PPO clip ε (DAPO's clip-higher)",
    phase: 'grpo',
    hosts: 'both',
    kind: 'number',
    default: 0.28,
    min: 0,
    max: 10,
    step: 0.01,
    metavar: 'E',
  },
  maskTruncated: {
    flag: 'mask-truncated',
    label: 'Mask truncated',
    help: 'leave answers cut by the token limit out of the loss (off: trained on)',
    phase: 'grpo',
    hosts: 'both',
    kind: 'switch',
    default: false,
  },
  keepEqualGroups: {
    flag: 'keep-equal-groups',
    label: 'Keep equal groups',
    help: 'train on groups whose rewards are all equal (off: dropped; they carry no signal)',
    phase: 'grpo',
    hosts: 'both',
    kind: 'switch',
    default: false,
  },
  dynamicSampling: {
    flag: 'dynamic-sampling',
    label: 'Dynamic sampling',
    help: "a task whose answers all get one reward has nothing to teach; on, such tasks are replaced by fresh ones (up to the max tasks per step), keeping each step's signal (DAPO)",
    phase: 'grpo',
    hosts: 'both',
    kind: 'switch',
    default: false,
  },
  maxTasksPerStep: {
    flag: 'max-tasks-per-step',
    label: 'Max tasks per step',
    help: 'the most tasks a step may draw with dynamic sampling',
    phase: 'grpo',
    hosts: 'both',
    kind: 'integer',
    default: null,
    defaultText: '3 × the tasks per step',
    min: 1,
    max: 1024,
    metavar: 'N',
  },
  entropyTopQ: {
    flag: 'entropy-top-q',
    label: 'Entropy top q',
    help: 'train only on this top share of tokens by sampling entropy, e.g. 0.2 (1 = all)',
    phase: 'grpo',
    hosts: 'both',
    kind: 'number',
    default: 1,
    min: 0,
    minExclusive: true,
    max: 1,
    step: 0.05,
    mustBe: 'is a share of the tokens, in (0, 1]',
    metavar: 'Q',
  },
  maxStaleness: {
    flag: 'max-staleness',
    label: 'Max staleness',
    help: 'the most weight versions old rollouts may be (matters with max async ≥ 2)',
    phase: 'grpo',
    hosts: 'both',
    kind: 'integer',
    default: null,
    defaultText: 'no bound',
    min: 0,
    max: 8,
    metavar: 'K',
  },
  staleRollouts: {
    flag: 'stale-rollouts',
    label: 'Stale rollouts',
    help: 'what happens to rollouts past the max staleness',
    phase: 'grpo',
    hosts: 'both',
    kind: 'choice',
    default: 'resample',
    choices: [
      { value: 'resample', help: 'sampled again with the current weights' },
      { value: 'downweight', help: '×0.5 on the loss per version past the bound' },
    ],
    metavar: 'A',
  },
  echoWeight: {
    flag: 'echo-weight',
    label: 'ECHO weight λ',
    help: "multi-turn: also learn to predict the environment's replies (an SFT loss on them, weight λ; ECHO); 0 = off",
    phase: 'grpo',
    hosts: 'both',
    kind: 'number',
    default: 0,
    min: 0,
    max: 10,
    step: 0.05,
    metavar: 'L',
  },
  maxGradNorm: {
    flag: 'max-grad-norm',
    label: 'Max grad norm',
    help: 'clip the global gradient norm to this (0 disables)',
    phase: 'grpo',
    hosts: 'both',
    kind: 'number',
    default: 1,
    min: 0,
    max: 1000,
    step: 0.1,
    metavar: 'N',
  },
  weightDecay: { flag: 'weight-decay', label: 'Weight decay', help: 'AdamW weight decay', phase: 'grpo', hosts: 'both', kind: 'number', default: 0, min: 0, max: 1, step: 0.01, metavar: 'W' },
  maxTokens: {
    flag: 'max-tokens',
    label: 'Max tokens',
    help: 'longest answer sampled per model turn (measurements, demonstrations and GRPO)',
    phase: 'sampling',
    hosts: 'both',
    kind: 'integer',
    default: 32,
    min: 1,
    max: 4096,
    unit: 'tokens',
    metavar: 'N',
  },
  temperature: {
    flag: 'temperature',
    label: 'Temperature',
    help: 'sampling temperature of GRPO rollouts (1 = the model as is)',
    phase: 'sampling',
    hosts: 'both',
    kind: 'number',
    default: 1,
    min: 0,
    minExclusive: true,
    max: 2,
    step: 0.1,
    metavar: 'T',
  },
  evalTasks: {
    flag: 'eval-tasks',
    label: 'Measured tasks',
    help: 'held-out tasks measured before and after each phase (0 = none)',
    phase: 'measurements',
    hosts: 'cli',
    kind: 'integer',
    default: 32,
    min: 0,
    max: 100000,
    metavar: 'N',
  },
  evalTemperature: {
    flag: 'eval-temperature',
    label: 'Measurement temperature',
    help: 'sampling temperature of the measurements (0 = greedy, so they compare)',
    phase: 'measurements',
    hosts: 'cli',
    kind: 'number',
    default: 0,
    min: 0,
    max: 2,
    step: 0.1,
    metavar: 'T',
  },
  microBatch: {
    flag: 'micro-batch',
    label: 'Micro-batch',
    help: "sequences per backward pass (the step's gradient accumulates over them); on webgpu, given, it is forced and checked against the memory budget",
    phase: 'memory',
    hosts: 'cli',
    kind: 'integer',
    default: null,
    defaultText: '8 on the cpu backends; on webgpu the largest whose step fits --memory-budget',
    min: 1,
    max: 4096,
    metavar: 'N',
  },
  memoryBudget: {
    flag: 'memory-budget',
    label: 'Memory budget',
    help: 'GPU memory a training step may use on webgpu, in MiB, weights and optimizer state included; each step trains as many sequences at once as fit it',
    phase: 'memory',
    hosts: 'both',
    kind: 'integer',
    default: null,
    defaultText: "4 × the GPU's maxBufferSize, within 1024-4096",
    min: 1,
    max: 1048576,
    unit: 'MiB',
    mustBe: 'takes a whole number of MiB, e.g. 2048',
    metavar: 'MiB',
  },
  activationCheckpointing: {
    flag: 'activation-checkpointing',
    label: 'Activation checkpointing',
    help: "webgpu: keep each layer's output only and recompute the rest in backward",
    phase: 'memory',
    hosts: 'cli',
    kind: 'choice',
    default: 'auto',
    choices: [
      { value: 'auto', help: "on for a micro-batch whose activations would pass 256 MiB or the GPU's limits" },
      { value: 'on', help: 'always' },
      { value: 'off', help: 'never' },
    ],
    mustBe: 'takes auto, on or off',
    metavar: 'M',
  },
  loraRank: {
    flag: 'lora-rank',
    label: 'LoRA rank',
    help: 'LoRA adapters of this rank on every linear layer (0 = train every weight)',
    phase: 'memory',
    hosts: 'cli',
    kind: 'integer',
    default: null,
    defaultText: '16 for a model folder, 0 for tiny and nano',
    min: 0,
    max: 1024,
    metavar: 'R',
  },
  checkpointEvery: {
    flag: 'checkpoint-every',
    label: 'Checkpoint every',
    help: 'steps between saved weights and optimizer state (also saved at phase ends and at stop)',
    phase: 'checkpoints',
    hosts: 'both',
    kind: 'integer',
    default: 10,
    min: 0,
    max: 100000,
    unit: 'steps',
    metavar: 'N',
  },
  seed: { flag: 'seed', label: 'Seed', help: 'seeds the model init, task order and sampling', phase: 'run', hosts: 'cli', kind: 'integer', default: 0, min: 0, max: 2147483647, metavar: 'S' },
} as const satisfies Record<string, Knob>;

/** The name of a knob (its key in the table). */
export type KnobName = keyof typeof TRAINING_KNOBS;

type ValueOf<K extends Knob> = K extends ChoiceKnob ? K['choices'][number]['value'] : K extends SwitchKnob ? boolean : K extends { default: null } ? number | null : number;

/** A value for every knob: a whole training setup (what the panel edits and the CLI parses). */
export type TrainingSettings = { -readonly [K in KnobName]: ValueOf<(typeof TRAINING_KNOBS)[K]> };

/** Overrides of some knobs: a lesson's row, or what the person changed. */
export type TrainingOverrides = Partial<TrainingSettings>;

/** The knob names in the table's order. */
export const KNOB_NAMES = Object.keys(TRAINING_KNOBS) as KnobName[];

/** The row of a knob, typed as a row. */
export function knobOf(name: KnobName): Knob {
  return TRAINING_KNOBS[name];
}

/** Every knob at its default. */
export const KNOB_DEFAULTS: Readonly<TrainingSettings> = Object.freeze(Object.fromEntries(KNOB_NAMES.map((name) => [name, TRAINING_KNOBS[name].default])) as TrainingSettings);

/** The defaults with `overrides` over them (a lesson's row, say). */
export function withOverrides(overrides: TrainingOverrides, base: Readonly<TrainingSettings> = KNOB_DEFAULTS): TrainingSettings {
  return { ...base, ...overrides };
}

/** The names in `overrides` that are no knob of the table (a lesson row with a typo, a stale stored setup). */
export function unknownKnobs(overrides: Record<string, unknown>): string[] {
  return Object.keys(overrides).filter((name) => !(name in TRAINING_KNOBS));
}

/** How a knob's default is said in `--help` and the panel: the value, the text for "the trainer chooses", or "off". */
export function describeDefault(knob: Knob): string {
  if (knob.kind === 'switch') return 'off';
  if (knob.kind === 'choice') return knob.default;
  if (knob.default === null) return knob.defaultText ?? 'not set';
  // Small rates read as 5e-4, not 0.0005.
  return knob.default !== 0 && Math.abs(knob.default) < 0.01 ? knob.default.toExponential() : String(knob.default);
}

/** The limits of a numeric knob in words, e.g. "≥ 1 and ≤ 256" or "in (0, 1]". */
export function describeLimits(knob: NumberKnob): string {
  if (knob.minExclusive && knob.max !== undefined) return `in (${knob.min}, ${knob.max}]`;
  const low = knob.minExclusive ? `> ${knob.min}` : `≥ ${knob.min}`;
  return knob.max === undefined ? low : `${low} and ≤ ${knob.max}`;
}

/**
 * Why `value` is not allowed for `name` (a sentence naming the limit), or undefined when it is.
 * The sentence starts with the knob's name as the caller writes it (`--lr`, "GRPO learning rate").
 */
export function checkKnobValue(name: KnobName, value: unknown, said = `--${TRAINING_KNOBS[name].flag}`): string | undefined {
  const knob = knobOf(name);
  if (knob.kind === 'switch') return typeof value === 'boolean' ? undefined : `${said} is on or off, got ${JSON.stringify(value)}`;
  if (knob.kind === 'choice') {
    const allowed = knob.choices.map((choice) => choice.value);
    return allowed.includes(value as string) ? undefined : `${said} ${knob.mustBe ?? `must be one of ${allowed.join(', ')}`}, got "${String(value)}"`;
  }
  if (value === null && knob.default === null) return undefined;
  const number = value as number;
  const what = knob.kind === 'integer' ? 'an integer' : 'a number';
  const inRange = typeof number === 'number' && Number.isFinite(number) && (knob.minExclusive ? number > knob.min : number >= knob.min) && (knob.max === undefined || number <= knob.max);
  if (inRange && (knob.kind === 'number' || Number.isInteger(number))) return undefined;
  return `${said} ${knob.mustBe ?? `must be ${what} ${describeLimits(knob)}`}, got "${String(value)}"`;
}

/**
 * What is wrong with a whole setup (sentences, one per problem; empty when none): each value against
 * its limits, then the rules between knobs. `said` names a knob as the reader knows it.
 */
export function checkTrainingSettings(settings: TrainingSettings, said: (name: KnobName) => string = (name) => `--${TRAINING_KNOBS[name].flag}`): string[] {
  const problems = KNOB_NAMES.map((name) => checkKnobValue(name, settings[name], said(name))).filter((problem): problem is string => problem !== undefined);
  if (problems.length > 0) return problems;
  if (settings.maxTasksPerStep !== null && !settings.dynamicSampling) problems.push(`${said('maxTasksPerStep')} bounds ${said('dynamicSampling')}; give both, or neither`);
  if (settings.maxTasksPerStep !== null && settings.maxTasksPerStep < settings.tasksPerStep)
    problems.push(`${said('maxTasksPerStep')} must be ≥ ${said('tasksPerStep')} (${settings.tasksPerStep}), got ${settings.maxTasksPerStep}`);
  if (settings.staleRollouts !== TRAINING_KNOBS.staleRollouts.default && settings.maxStaleness === null)
    problems.push(`${said('staleRollouts')} says what to do past ${said('maxStaleness')}; give ${said('maxStaleness')} too`);
  return problems;
}

/** The entries of `value` (a stored setup, a share link) that are knobs of the table with an allowed value; everything else is left out, so a damaged or older table changes nothing it should not. */
export function knownKnobValues(value: unknown): TrainingOverrides {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
  return Object.fromEntries(Object.entries(value).filter(([name, item]) => name in TRAINING_KNOBS && checkKnobValue(name as KnobName, item) === undefined)) as TrainingOverrides;
}
