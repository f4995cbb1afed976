/**
 * The `tabrl` command line: a table of subcommands, each a module exporting `run<Name>(argv)`.
 * Errors that the user can fix are printed as one message. Anything else (a full disk, a bug) is one
 * line too, with the stack when TABRL_DEBUG=1.
 */
import { BUILTIN_ENVIRONMENTS } from '../envs/builtin/index.ts';
import { CliError } from './cli-error.ts';
import { runAudit } from './audit.ts';
import { runRedteam } from './redteam.ts';
import { runReview } from './review.ts';
import { runCalibrate } from './calibrate.ts';
import { runEval } from './eval.ts';
import { runForward } from './forward.ts';
import { runGenerate } from './generate.ts';
import { runSynth } from './synth.ts';
import { runServe } from './serve.ts';
import { runTasks } from './tasks.ts';
import { runSimulate } from './simulate.ts';
import { runTrain } from './train.ts';
import { errorMessage } from '../common/error-message.ts';
import { runValidate } from './validate.ts';
import { parseFlags } from './flags.ts';
import { closestName } from '../common/closest-name.ts';

/** A subcommand: a one-line description and its entry point. */
interface Command {
  summary: string;
  run(argv: string[]): Promise<number>;
}

const COMMANDS: Record<string, Command> = {
  envs: { summary: 'list the built-in environments', run: listEnvironments },
  eval: { summary: 'evaluate an environment against an OpenAI-compatible endpoint', run: runEval },
  validate: { summary: 'check an environment without a model: its expert or reference answers must pass every task', run: runValidate },
  train: { summary: 'warm a model up with SFT and train it with GRPO on an environment', run: runTrain },
  generate: { summary: 'sample chat completions from a model folder or tiny, with token ids and logprobs', run: runGenerate },
  forward: { summary: 'run a model folder on given tokens and print the logits as JSON', run: runForward },
  synth: { summary: 'make question/answer tasks grounded in documents, verified by a solver', run: runSynth },
  tasks: { summary: 'tasks from-traces: turn agent logs into tasks; tasks rows: the dataset rows of tabrl serve', run: runTasks },
  simulate: { summary: 'simulate the tools in agent logs, and measure how faithfully (fidelity per tool)', run: runSimulate },
  serve: { summary: "serve an environment over OpenEnv's protocol (WebSocket sessions) for TRL, prime-rl and other trainers", run: runServe },
  calibrate: { summary: "sort an environment's tasks by pass rate and keep the learnable ones", run: runCalibrate },
  audit: { summary: 'look for reward hacking in finished rollouts (detectors and a judge)', run: runAudit },
  redteam: { summary: 'search for replies the reward pays without the task done, before training', run: runRedteam },
  review: { summary: 'one ranked review queue over audits, red teams, judge panels and calibration; accept or reject', run: runReview },
};

const USAGE = `Usage: tabrl <command> [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, command]) => `  ${name.padEnd(10)} ${command.summary}`)
  .join('\n')}

Run \`tabrl <command> --help\` for a command's options.`;

/** Runs the CLI with `argv` (without node and script) and returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    console.log(USAGE);
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    const guess = closestName(name, Object.keys(COMMANDS));
    console.error(`tabrl: unknown command "${name}"${guess ? `; did you mean \`tabrl ${guess}\`?` : ''}\n\n${USAGE}`);
    return 2;
  }
  try {
    return await command.run(rest);
  } catch (error) {
    if (error instanceof CliError) {
      console.error(`tabrl ${name}: ${error.message}${error.pointToHelp ? `\nRun \`tabrl ${name} --help\` for the options.` : ''}`);
      return error.exitCode;
    }
    if (error instanceof TypeError && (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      console.error(`tabrl ${name}: ${error.message}\nRun \`tabrl ${name} --help\` for the options.`);
      return 2;
    }
    if (process.env.TABRL_DEBUG === '1') throw error;
    console.error(`tabrl ${name}: ${errorMessage(error)} (set TABRL_DEBUG=1 to see where)`);
    return 1;
  }
}

async function listEnvironments(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags({ args: argv, allowPositionals: true, options: { help: { type: 'boolean', short: 'h' } } });
  if (values.help) {
    console.log('Usage: tabrl envs\n\nLists the built-in environments, each with a one-line description; run one with tabrl eval <name> or tabrl train <name>.');
    return 0;
  }
  if (positionals.length > 0) throw new CliError(`takes no arguments, got "${positionals.join(' ')}"`, 2, true);
  const width = Math.max(...Object.keys(BUILTIN_ENVIRONMENTS).map((name) => name.length));
  for (const [name, entry] of Object.entries(BUILTIN_ENVIRONMENTS)) console.log(`${name.padEnd(width)}  ${entry.description}`);
  return 0;
}
