/**
 * A wrong argument value for a built-in, typed in the playground's arguments field, reaches the
 * person as the loader's own message: the built-in's source as the editor shows it (importing
 * readArgs from 'tabrl'), compiled to CommonJS and run by the real sandbox API behind the app's real
 * bridge over a comlink MessageChannel, fails to open with that message, which the evaluation's
 * `failed` handler puts in the run card (`run.failure`, shown as `run-failure`).
 */
import * as Comlink from 'comlink';
import ts from 'typescript';
import { afterEach, expect, test, vi } from 'vitest';
import * as tabrl from '../../../src/envs/index.ts';
import { BUILTINS } from '../../../src/ui/features/environment/builtins.ts';
import { createSandboxApi } from '../../../src/workers/sandbox/sandbox-api.ts';

vi.mock('virtual:tabrl-sandbox-runtime', () => ({ default: '/* the runtime is faked in Node */' }));
const { openSandbox } = await import('../../../src/workers/sandbox-bridge.ts');

// The modules the sandbox answers (src/workers/sandbox/runtime.ts), from the same glob.
const MODULES = new Map<string, unknown>([['tabrl', tabrl]]);
for (const [path, module] of Object.entries(import.meta.glob(['../../../src/envs/builtin/**/*.ts', '!../../../src/envs/builtin/index.ts'], { eager: true }))) {
  MODULES.set(`tabrl/builtin/${path.replace('../../../src/envs/builtin/', '').replace(/\.ts$/, '')}`, module);
}

/** Runs CommonJS text with the sandbox's module names, as the runtime's runModule does. */
function runModule(code: string): Record<string, unknown> {
  const module = { exports: {} as Record<string, unknown> };
  const require = (name: string) => {
    if (!MODULES.has(name)) throw new Error(`cannot import "${name}" in the sandbox`);
    return MODULES.get(name);
  };
  new Function('module', 'exports', 'require', code)(module, module.exports, require);
  return module.exports;
}

const ports: MessagePort[] = [];
afterEach(() => {
  for (const port of ports.splice(0)) port.close();
});

/** Opens a sandbox session on the user-facing source of built-in `name` with `args`. */
async function openBuiltin(name: string, args: Record<string, unknown>) {
  const source = BUILTINS.find((builtin) => builtin.name === name)!.source;
  expect(source).toMatch(/import \{[^}]*\breadArgs\b[^}]*\} from 'tabrl';/);
  const { outputText } = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } });
  const createFrame = async () => {
    const channel = new MessageChannel();
    ports.push(channel.port1, channel.port2);
    Comlink.expose(createSandboxApi(runModule), channel.port2 as unknown as Comlink.Endpoint);
    return { port: channel.port1, onError: () => {}, dispose: () => channel.port1.close() };
  };
  return openSandbox({ code: outputText, label: name, args, client: new tabrl.ScriptedClient(() => 'ok'), createFrame });
}

test("a wrong value in the playground's arguments fails the load with the built-in's message", async () => {
  await expect(openBuiltin('wordle', { numTasks: 'x' })).rejects.toThrow('wordle: numTasks must be a whole number from 0 to 2015 (one game per training word), got "x"');
  await expect(openBuiltin('countdown', { difficulty: 9 })).rejects.toThrow('countdown: difficulty must be a whole number from 2 to 6 (how many numbers are given), got 9');
});

test('valid arguments still load in the sandbox', async () => {
  const session = await openBuiltin('reverse-text', { numTasks: 3, numEvalTasks: 2, compact: true });
  expect(session.info).toMatchObject({ name: 'reverse-text', numTasks: 3, numEvaluationTasks: 2 });
  session.dispose();
});

test("an argument key the file never reads comes back as a warning with the key it likely meant, as tabrl eval prints it", async () => {
  // Wordle's arguments left in the field when reverse-text opens: reverse-text reads none of these.
  const session = await openBuiltin('reverse-text', { numtasks: 3, answers: 'practice' });
  expect(session.info.unusedArgWarnings).toEqual([
    'The environment argument "numtasks" was not used by the environment; did you mean "numTasks"?',
    expect.stringMatching(/^The environment argument "answers" was not used by the environment \(it reads .*numTasks/),
  ]);
  session.dispose();
  const clean = await openBuiltin('reverse-text', { numTasks: 3 });
  expect(clean.info.unusedArgWarnings).toBeUndefined();
  clean.dispose();
});
