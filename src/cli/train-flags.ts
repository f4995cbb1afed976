/**
 * `tabrl train`'s knob flags, made from the one table of training settings (src/rl/training-settings.ts):
 * the parseArgs options, the `--help` lines (grouped by phase, each with its default) and the
 * parse of the given flags over a base row (the table's defaults, or a lesson's row over them).
 * The role flags (--judge-*, --synth-*) and the paths (--out, --resume) are train.ts's own.
 */
import { checkKnobValue, checkTrainingSettings, describeDefault, KNOB_NAMES, knobOf, TRAINING_KNOBS, type KnobName, type SettingPhase, type TrainingSettings } from '../rl/training-settings.ts';
import { CliError } from './cli-error.ts';

/** The parseArgs options of every knob: a switch is a boolean flag, every other knob takes a value. */
export const KNOB_FLAG_OPTIONS: Record<string, { type: 'string' | 'boolean' }> = Object.fromEntries(
  KNOB_NAMES.map((name) => [TRAINING_KNOBS[name].flag, { type: knobOf(name).kind === 'switch' ? 'boolean' : 'string' }]),
);

const PHASE_HEADINGS: Record<SettingPhase, string> = {
  'warm-up': 'Warm-up (SFT on demonstrations)',
  grpo: 'GRPO (docs/training.md says when to use each)',
  sampling: 'Sampling',
  measurements: 'Measurements',
  memory: 'Memory',
  checkpoints: 'Checkpoints',
  run: 'Run',
};

/** Column where a flag's help starts. */
const HELP_COLUMN = 25;
/** Width the help is wrapped to. */
const HELP_WIDTH = 118;

/** The `--help` lines of the knobs, grouped by phase under headings, each with its choices and default. */
export function knobUsage(): string {
  const sections: string[] = [];
  for (const phase of Object.keys(PHASE_HEADINGS) as SettingPhase[]) {
    const names = KNOB_NAMES.filter((name) => TRAINING_KNOBS[name].phase === phase);
    if (names.length === 0) continue;
    sections.push(`${PHASE_HEADINGS[phase]}:\n${names.map(knobHelpLine).join('\n')}`);
  }
  return sections.join('\n\n');
}

function knobHelpLine(name: KnobName): string {
  const knob = knobOf(name);
  const head = `  --${knob.flag}${knob.kind === 'switch' ? '' : ` ${knob.metavar ?? 'X'}`}`;
  const choices = knob.kind === 'choice' ? `: ${knob.choices.map((choice) => `${choice.value}, ${choice.help}`).join('; ')}` : '';
  const unit = (knob.kind === 'integer' || knob.kind === 'number') && knob.unit ? ` ${knob.unit}` : '';
  // The default comes before the choices, so it reads on the flag's first lines.
  const text = `${knob.help} (default ${describeDefault(knob)}${knob.kind !== 'switch' && knob.kind !== 'choice' && knob.default !== null ? unit : ''})${choices}`;
  return wrap(head.length + 1 < HELP_COLUMN ? head.padEnd(HELP_COLUMN) : `${head} `, text);
}

/** `first` followed by `text` wrapped to HELP_WIDTH, continued lines indented to HELP_COLUMN. */
function wrap(first: string, text: string): string {
  const lines: string[] = [];
  let line = first;
  for (const word of text.split(' ')) {
    if (line.length + word.length > HELP_WIDTH && line.trim().length > 0 && line.length > HELP_COLUMN) {
      lines.push(line.trimEnd());
      line = ' '.repeat(HELP_COLUMN);
    }
    line += `${word} `;
  }
  lines.push(line.trimEnd());
  return lines.join('\n');
}

/**
 * The settings of a new run: `base` (the table's defaults, or a lesson's row over them) with the
 * knob flags given over it, each checked against its limits and the rules between knobs. A value
 * out of its limits is a usage error (exit 2) naming the flag and the limit.
 */
export function knobSettingsFromFlags(values: Record<string, string | boolean | undefined>, base: TrainingSettings): TrainingSettings {
  const settings: TrainingSettings = { ...base };
  for (const name of KNOB_NAMES) {
    const knob = knobOf(name);
    const given = values[knob.flag];
    if (given === undefined) continue;
    const value = knob.kind === 'switch' ? given === true : knob.kind === 'choice' ? given : given === '' ? NaN : Number(given);
    const problem = checkKnobValue(name, value);
    // The flag as typed, not as Number() read it ("1e", " 2").
    if (problem) throw new CliError(problem.replace(/got "[^"]*"$/, `got "${String(given)}"`), 2);
    (settings as Record<KnobName, unknown>)[name] = value;
  }
  const [problem] = checkTrainingSettings(settings);
  if (problem) throw new CliError(problem, 2);
  return settings;
}
