/**
 * The teacher of `tabrl train`'s SFT warm-up: a built-in environment's scripted expert, or, for an
 * environment whose tasks were planted backwards (`info.planted`: `tabrl synth --backwards`,
 * lesson 7's file), the planted tasks' reference paths — their planted calls, then the answer or
 * "done" (src/envs/studio/planted-path.ts) — played through the environment like any policy, so the
 * demonstrations are the tool calls in the harness's format. It chooses and builds the client; it
 * makes no demonstration.
 */
import { BUILTIN_ENVIRONMENTS, isBuiltinEnvironment, loadBuiltinExpert } from '../envs/builtin/index.ts';
import { ScriptedClient, type ChatClient, type Environment } from '../envs/index.ts';
import { plantedPathOf, plantedPathPolicy } from '../envs/studio/index.ts';
import { CliError } from './cli-error.ts';

/** The warm-up's expert for the environment `spec` (loaded as `env`); a `CliError` saying what to do when it has none. */
export async function warmupExpert(spec: string, env: Environment): Promise<ChatClient> {
  if (isBuiltinEnvironment(spec)) return new ScriptedClient(await loadBuiltinExpert(spec, env));
  const tasks = env.demonstrationTasks;
  const withPaths = tasks.filter((task) => plantedPathOf(task) !== undefined).length;
  if (withPaths > 0) return new ScriptedClient(plantedPathPolicy(tasks, (reply) => env.parser.formatAnswer(reply)));
  throw new CliError(
    `an SFT warm-up needs demonstrations; only built-in environments (${Object.keys(BUILTIN_ENVIRONMENTS).join(', ')}) have an expert, and environments of tasks planted backwards (info.planted, from tabrl synth --backwards) their planted paths. Pass --sft-steps 0 to skip the warm-up.`,
    2,
  );
}
