/**
 * The isolation layer is one for both hosts: the same environment file, loaded by the CLI's isolated
 * process (QuickJS in a forked child) and by the browser sandbox's API behind the app's real bridge
 * (over a comlink MessageChannel in Node), is described the same way: the parser's answer template,
 * the group rewards and the unread argument are in both. And the page checks what the sandbox
 * returns as the CLI checks its child: a forged description or rollout stops the sandbox with a
 * SandboxDataError naming what was wrong.
 */
import * as Comlink from 'comlink';
import ts from 'typescript';
import { afterEach, describe, expect, test, vi } from 'vitest';
import * as tabrl from '../../../src/envs/index.ts';
import { ScriptedClient } from '../../../src/envs/index.ts';
import { loadIsolatedEnvironment, type IsolatedEnvironment } from '../../../src/cli/isolated-environment.ts';
import { createSandboxApi } from '../../../src/workers/sandbox/sandbox-api.ts';
import type { SandboxApi } from '../../../src/workers/sandbox/protocol.ts';
import { moduleExports, moduleRequire, type ModuleFactory } from '../../../src/isolation/environment-module.ts';
import { ANSWER_PLACEHOLDER } from '../../../src/isolation/protocol.ts';
import { writeEnvFile } from '../../support/tabrl-cli.ts';

vi.mock('virtual:tabrl-sandbox-runtime', () => ({ default: '/* the runtime is faked in Node */' }));
const { openSandbox, SandboxDataError } = await import('../../../src/workers/sandbox-bridge.ts');

const SOURCE = `
import { SingleTurnEnv, Rubric, XMLParser } from 'tabrl';
const exactAnswer = (ctx) => (ctx.parsed?.answer === ctx.answer ? 1 : 0);
const distinctAnswers = (group) => group.map(() => 0.5);
export default function loadEnvironment(args = {}) {
  return new SingleTurnEnv({
    name: 'echo-words',
    dataset: [{ question: 'cat', answer: 'cat' }, { question: 'dog', answer: 'dog' }].slice(0, args.numTasks ?? 2),
    parser: new XMLParser(['answer']),
    rubric: new Rubric({ funcs: [exactAnswer], groupRewards: [{ fn: distinctAnswers, weight: 0.5 }] }),
  });
}
`;

let isolated: IsolatedEnvironment | undefined;
const ports: MessagePort[] = [];
afterEach(() => {
  isolated?.close();
  isolated = undefined;
  for (const port of ports.splice(0)) port.close();
});

/** A sandbox frame in this process whose worker exposes `api` on a MessageChannel. */
function frameWith(api: SandboxApi) {
  return async () => {
    const channel = new MessageChannel();
    ports.push(channel.port1, channel.port2);
    Comlink.expose(api, channel.port2 as unknown as Comlink.Endpoint);
    return { port: channel.port1, onError: () => {}, dispose: () => channel.port1.close() };
  };
}

/** The sandbox API over SOURCE compiled to CommonJS (as the editor compiles it), its `require` answering 'tabrl' as the runtime does. */
function browserSandboxApi(): SandboxApi {
  const { outputText } = ts.transpileModule(SOURCE, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } });
  const require = moduleRequire(new Map([['tabrl', tabrl]]), 'in this test');
  return createSandboxApi(() => moduleExports(new Function('module', 'exports', 'require', outputText) as ModuleFactory, require));
}

const args = { numTasks: 2, numtask: 5 };

test('one environment file is described alike by the CLI isolated process and the browser sandbox', { timeout: 60_000 }, async () => {
  isolated = await loadIsolatedEnvironment(writeEnvFile(SOURCE, 'env.mjs'), args, { timeLimitMs: 20_000 });
  const session = await openSandbox({ code: 'SOURCE, compiled by the fake frame', label: 'env.mjs', args, client: new ScriptedClient(['<answer>cat</answer>']), createFrame: frameWith(browserSandboxApi()) });
  try {
    expect(session.info).toEqual(isolated.info);
    expect(session.info).toMatchObject({
      name: 'echo-words',
      kind: 'SingleTurnEnv',
      numTasks: 2,
      rewardNames: ['exactAnswer'],
      groupRewardNames: ['distinctAnswers'],
      groupRewardWeights: [0.5],
      answerTemplate: `<answer>\n${ANSWER_PLACEHOLDER}\n</answer>`,
      unusedArgWarnings: ['The environment argument "numtask" was not used by the environment; did you mean "numTasks"?'],
    });
    // The host formats reference answers from the template, as the environment's own parser would.
    expect(isolated.parser.formatAnswer('cat')).toBe(new tabrl.XMLParser(['answer']).formatAnswer('cat'));
  } finally {
    session.dispose();
  }
});

describe('the page checks what the sandbox returns', () => {
  /** `real`, the real sandbox API, with some methods replaced by forgeries. */
  function forging(real: SandboxApi, forged: Partial<SandboxApi>): SandboxApi {
    return { ...real, ...forged };
  }

  test('a description with a reward named __proto__ stops the sandbox before any rollout runs', async () => {
    const real = browserSandboxApi();
    const api = forging(real, { loadEnvironment: async (code, loadArgs) => ({ ...(await real.loadEnvironment(code, loadArgs)), rewardNames: ['__proto__'] }) });
    const opened = openSandbox({ code: 'SOURCE', label: 'env.ts', args: {}, client: new ScriptedClient(['x']), createFrame: frameWith(api) });
    await expect(opened).rejects.toThrow(SandboxDataError);
    await expect(opened).rejects.toThrow(/Environment "env.ts" was stopped: the environment's sandbox returned invalid data \(a reward function name "__proto__", which tabrl cannot use as a key; rename the function\)/);
  });

  test('a rollout with an infinite reward fails the session; texts too long are cut', async () => {
    const real = browserSandboxApi();
    let reward = Infinity;
    const api = forging(real, {
      rollout: async (taskIndex, sampling, model, host) => ({ ...(await real.rollout(taskIndex, sampling, model, host)), reward, errors: [{ source: 'env', name: 'x'.repeat(5000), message: 'long' }] }),
    });
    const session = await openSandbox({ code: 'SOURCE', label: 'env.ts', args: {}, client: new ScriptedClient(['<answer>cat</answer>']), createFrame: frameWith(api) });
    try {
      reward = 1;
      const trajectory = await session.rollout(0, { max_tokens: 8 }, 'policy');
      expect(trajectory.reward).toBe(1);
      expect(trajectory.errors[0]!.name).toMatch(/^x{200}… \[4800 more characters cut by tabrl\]$/);
      reward = Infinity;
      await expect(session.rollout(1, { max_tokens: 8 }, 'policy')).rejects.toThrow(/Environment "echo-words" was stopped: the environment's sandbox returned invalid data \(the trajectory has reward Infinity/);
      // The sandbox is done for: later calls fail at once.
      await expect(session.rollout(0, { max_tokens: 8 }, 'policy')).rejects.toThrow(SandboxDataError);
    } finally {
      session.dispose();
    }
  });
});
