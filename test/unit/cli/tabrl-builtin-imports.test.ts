// Environment files that import the built-in modules as 'tabrl/builtin/...', as the playground's
// files do: the CLI's type check and bundler accept the playground's names and refuse the rest with
// a message listing what exists, and the real `tabrl` binary evaluates such files — a wrapper of
// reverse-text with its own reward weight, and the exact text "New from built-in" makes for Wordle.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { bundleEnvironmentFile, EnvFileCompileError } from '../../../src/cli/compile-env-file.ts';
import { builtinModuleFiles } from '../../../src/cli/env-modules.ts';
import { typecheckEnvironmentFile } from '../../../src/cli/typecheck-env.ts';
import { reverseTextExpertPolicy } from '../../../src/envs/builtin/reverse-text.ts';
import { wordleExpertPolicy } from '../../../src/envs/builtin/wordle.ts';
import { BUILTINS } from '../../../src/ui/features/environment/builtins.ts';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../../support/fake-openai-server.ts';
import { runTabrl } from '../../support/tabrl-cli.ts';

const tabrl = (args: string[]) => runTabrl(args, { timeoutMs: 60_000 });

// The names the playground's sandbox answers (src/workers/sandbox/runtime.ts), from the same glob.
const PLAYGROUND_MODULES = Object.keys(import.meta.glob(['../../../src/envs/builtin/**/*.ts', '!../../../src/envs/builtin/index.ts'])).map(
  (path) => `tabrl/builtin/${path.replace('../../../src/envs/builtin/', '').replace(/\.ts$/, '')}`,
);

// Reverse-text scored by its LCS reward alone, weighted 2 instead of 1 with the format reward.
const REWEIGHTED_REVERSE_TEXT = `
import { Rubric, SingleTurnEnv, XMLParser } from 'tabrl';
import loadReverseText, { lcsReward, type ReverseTextArgs } from 'tabrl/builtin/reverse-text';

export default function loadEnvironment(args: ReverseTextArgs = {}) {
  const base = loadReverseText({ numTasks: 4, numEvalTasks: 4, ...args });
  return new SingleTurnEnv({
    name: 'reverse-text-lcs-only',
    dataset: base.dataset,
    evalDataset: base.evalDataset,
    systemPrompt: base.systemPrompt,
    parser: new XMLParser(['reversed']),
    rubric: new Rubric().addReward(lcsReward, 2),
    passThreshold: 2,
  });
}
`;

const UNKNOWN_MODULE = `
import { SingleTurnEnv, Rubric } from 'tabrl';
import { createRng } from 'tabrl/builtin/nope';

export default function loadEnvironment() {
  return new SingleTurnEnv({ name: 'nope', dataset: [{ question: String(createRng(1)()) }], rubric: new Rubric() });
}
`;

let dir: string;
let server: FakeOpenAIServer;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tabrl-builtin-imports-'));
  // The built-ins' experts behind a server: model 'reverser' reverses the text, any other plays Wordle.
  server = await startFakeOpenAIServer(async (messages, request) => String(await (request.model === 'reverser' ? reverseTextExpertPolicy : wordleExpertPolicy)(messages, request)));
  writeFileSync(join(dir, 'reweighted.ts'), REWEIGHTED_REVERSE_TEXT);
  writeFileSync(join(dir, 'nope.ts'), UNKNOWN_MODULE);
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the tabrl/builtin names', () => {
  test('are the playground sandbox\'s names, subfolders included and the registry left out', () => {
    const names = [...builtinModuleFiles().keys()];
    expect(names).toEqual([...PLAYGROUND_MODULES].sort());
    expect(names).toContain('tabrl/builtin/data/wordle-words');
    expect(names).not.toContain('tabrl/builtin/index');
  });

  test('every built-in module bundles into a file, its library imports left as the one require(\'tabrl\')', async () => {
    const path = join(dir, 'all-modules.ts');
    writeFileSync(path, `${PLAYGROUND_MODULES.map((name, i) => `import * as m${i} from '${name}';`).join('\n')}\nexport default () => [${PLAYGROUND_MODULES.map((_, i) => `m${i}`).join(', ')}];\n`);
    const code = await bundleEnvironmentFile(path);
    expect(new Set([...code.matchAll(/require\("([^"]+)"\)/g)].map((match) => match[1]))).toEqual(new Set(['tabrl']));
    expect(code).toContain('function lcsReward');
  });

  test('the file "New from built-in" makes for each built-in bundles', async () => {
    for (const builtin of BUILTINS) {
      writeFileSync(join(dir, `${builtin.name}.ts`), builtin.source);
      await expect(bundleEnvironmentFile(join(dir, `${builtin.name}.ts`)), builtin.name).resolves.toContain('require("tabrl")');
    }
    expect(BUILTINS.map((builtin) => builtin.name)).toContain('wordle');
  });

  test('an unknown tabrl/builtin module is refused by the type check and the bundler, naming it and what exists', async () => {
    const checked = typecheckEnvironmentFile(join(dir, 'nope.ts')).join('\n');
    expect(checked).toMatch(/nope\.ts:3:27 - error TS2307: cannot import "tabrl\/builtin\/nope": .*one of arithmetic, .*data\/wordle-words, .*wordle-compact/);
    const bundled = await bundleEnvironmentFile(join(dir, 'nope.ts')).catch((error: unknown) => error);
    expect(bundled).toBeInstanceOf(EnvFileCompileError);
    expect((bundled as Error).message).toMatch(/nope\.ts:3:27: cannot import "tabrl\/builtin\/nope": .*one of arithmetic, .*reverse-text/);
  });

  test('names the playground refuses stay refused: the registry, library internals, a .ts suffix', async () => {
    const path = join(dir, 'refused.ts');
    writeFileSync(path, "import { a } from 'tabrl/builtin/index';\nimport { b } from 'tabrl/_internal/plain-data';\nimport { c } from 'tabrl/builtin/random.ts';\nexport default () => [a, b, c];\n");
    const message = String(await bundleEnvironmentFile(path).catch((error: unknown) => error));
    expect(message).toContain('cannot import "tabrl/builtin/index"');
    expect(message).toContain('cannot import "tabrl/_internal/plain-data"');
    expect(message).toContain(`cannot import "tabrl/builtin/random.ts" (write 'tabrl/builtin/random', without .ts)`);
  });
});

describe('tabrl with a file importing tabrl/builtin/...', () => {
  test('eval type-checks and runs a reverse-text wrapper with its own reward weight, and writes results', async () => {
    const out = join(dir, 'reweighted-out');
    const { code, stdout, stderr } = await tabrl(['eval', join(dir, 'reweighted.ts'), '--base-url', server.baseURL, '--model', 'reverser', '-n', '3', '--out', out, '--json']);
    expect(stderr).toContain('wrote 3 rollouts');
    expect(code).toBe(0);
    const summary = JSON.parse(stdout);
    expect(summary.scores).toEqual({ lcsReward: 1 });
    // The reward is the wrapper's weight 2 on the built-in's LCS reward (the built-in itself gives 1.2).
    const lines = readFileSync(join(out, 'results.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    expect(lines.map((line) => line.reward)).toEqual([2, 2, 2]);
  });

  test('validate refuses an unknown tabrl/builtin module with the type check\'s message', async () => {
    const { code, stderr } = await tabrl(['validate', join(dir, 'nope.ts')]);
    expect(code).toBe(1);
    expect(stderr).toContain('cannot import "tabrl/builtin/nope"');
    expect(stderr).toContain('wordle-compact');
  });

  test('eval runs the exact file the playground makes with "New from built-in" for Wordle', async () => {
    const source = BUILTINS.find((builtin) => builtin.name === 'wordle')!.source;
    // The playground's text imports the built-in modules by name, as a downloaded file does.
    expect(source).toContain("from 'tabrl/builtin/data/wordle-words'");
    writeFileSync(join(dir, 'my-wordle.ts'), source);
    const out = join(dir, 'wordle-out');
    const { code, stdout, stderr } = await tabrl(['eval', join(dir, 'my-wordle.ts'), '--base-url', server.baseURL, '--model', 'expert', '-n', '2', '--out', out, '--json']);
    expect(stderr).toContain('wrote 2 rollouts');
    expect(code).toBe(0);
    const summary = JSON.parse(stdout);
    expect(summary.numRollouts).toBe(2);
    expect(summary.scores.winReward).toBe(1);
  });
});
