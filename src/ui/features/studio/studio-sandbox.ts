/**
 * The open environment, compiled and loaded in a fresh sandbox for a studio job (the judge panel's
 * evaluation, the red team's scoring), with the Settings card's arguments and time limit. It opens
 * the session only; what runs in it, and disposing of it, is the caller's part.
 */
import type { ChatClient } from '../../../envs/index.ts';
import { openSandbox, type LentJudge, type SandboxSession } from '../../../workers/sandbox-bridge.ts';
import { currentEnvironment, parseArgs } from '../environment/current-environment.ts';
import { compileModel } from '../environment/monaco-setup.ts';
import { environmentModel } from '../environment/editor-models.ts';
import { createIframeSandbox } from '../jobs/sandbox-frame.ts';
import { usePlayground } from '../../store/index.ts';

/** A session over the open environment; throws a readable error when none is open or it does not compile. */
export async function openStudioSandbox(options: { client: ChatClient; judge?: LentJudge; signal: AbortSignal }): Promise<{ session: SandboxSession; environment: string; builtin?: string }> {
  const saved = currentEnvironment();
  if (!saved) throw new Error('Open an environment first (the Environment card).');
  const compiled = await compileModel(environmentModel(saved.id, saved.source));
  if (!compiled.ok) throw new Error(`The environment has ${compiled.problems.length} compile error(s); fix them first. Line ${compiled.problems[0]!.line}: ${compiled.problems[0]!.message}`);
  const { settings } = usePlayground.getState();
  const session = await openSandbox({
    code: compiled.code,
    label: saved.name,
    args: parseArgs(settings.argsJson),
    client: options.client,
    ...(options.judge ? { judge: options.judge } : {}),
    timeLimitMs: settings.timeLimitMs,
    signal: options.signal,
    createFrame: createIframeSandbox,
  });
  return { session, environment: saved.name, ...(saved.builtin ? { builtin: saved.builtin } : {}) };
}
