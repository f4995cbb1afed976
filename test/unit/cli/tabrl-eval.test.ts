// End-to-end: the real `tabrl` binary (bin/tabrl.mjs) evaluates environment files against a real
// local HTTP server that speaks the OpenAI chat-completions protocol.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { wordleExpertPolicy } from '../../../src/envs/builtin/wordle.ts';
import { startFakeOpenAIServer, withFakeOpenAIServer, type FakeOpenAIServer, type FakePolicy } from '../../support/fake-openai-server.ts';
import { readResults, runTabrl } from '../../support/tabrl-cli.ts';

/** Runs the CLI and resolves with its exit code and output (never rejects). */
const tabrl = (args: string[], env: Record<string, string> = {}) => runTabrl(args, { env, timeoutMs: 60_000 });

// An environment file outside the repository, importing the library as 'tabrl'.
const REVERSE_ENV = `
import { SingleTurnEnv, Rubric, XMLParser, type RewardContext } from 'tabrl';

/** Reverse a word; exact match scores 1. */
const parser = new XMLParser(['reversed']);
const words = ['stressed', 'drawer', 'live', 'star', 'gateman'];
const exactReward = (ctx: RewardContext) => (ctx.parser.parseAnswer(ctx.completion) === ctx.answer ? 1 : 0);
const brokenMetric = (_ctx: RewardContext): number => { throw new Error('metric bug'); };
const replyLengthMetric = (ctx: RewardContext) => ctx.completion.at(-1)?.content.length ?? 0;

export default function loadEnvironment(args: { prefix?: string } = {}) {
  return new SingleTurnEnv({
    name: 'reverse-words',
    dataset: words.map((word) => ({ question: (args.prefix ?? 'Reverse: ') + word, answer: [...word].reverse().join('') })),
    parser,
    systemPrompt: parser.formatInstructions(),
    rubric: new Rubric({ funcs: [exactReward, brokenMetric], weights: [1, 0] }).addMetric(replyLengthMetric, 'info'),
  });
}
`;

let server: FakeOpenAIServer;
let dir: string;
beforeAll(async () => {
  // The fake model reverses the last word of the question, except for "live" (it answers "evil!").
  server = await startFakeOpenAIServer((messages) => {
    const word = messages.at(-1)!.content.split(' ').at(-1)!;
    return word === 'live' ? '<reversed>evil!</reversed>' : `<reversed>${[...word].reverse().join('')}</reversed>`;
  });
  dir = mkdtempSync(join(tmpdir(), 'tabrl-eval-'));
  writeFileSync(join(dir, 'reverse.ts'), REVERSE_ENV);
});
afterAll(() => server.close());

describe('tabrl eval', () => {
  test('evaluates an env file against an OpenAI-compatible server and writes results.jsonl + metadata.json', async () => {
    const out = join(dir, 'out');
    const { code, stdout, stderr } = await tabrl(
      ['eval', join(dir, 'reverse.ts'), '--base-url', server.baseURL, '--model', 'fake-1', '-n', '5', '-r', '2', '--temperature', '0.7', '--max-tokens', '32', '--seed', '3', '--env-args', '{"prefix": "Reverse this: "}', '--api-key-env', 'MY_KEY', '--out', out],
      { MY_KEY: 'sk-secret' },
    );
    expect(stderr).toContain('wrote 10 rollouts');
    expect(code).toBe(0);
    expect(stdout).toMatch(/reward\s+0\.800 ± 0\.400/);
    expect(stdout).toMatch(/pass@2\s+0\.800/);
    expect(stdout).toMatch(/errors\s+10 rollouts \(reward: 10\)/);

    const lines = readResults(out);
    expect(lines).toHaveLength(10);
    const live = lines.find((line) => line.answer === 'evil');
    expect(live).toMatchObject({ reward: 0, passed: false, scores: { exactReward: 0, brokenMetric: 0 }, stop_reason: 'completed' });
    expect(live.prompt.at(-1).content).toBe('Reverse this: live');
    expect(live.completion).toEqual([{ role: 'assistant', content: '<reversed>evil!</reversed>' }]);
    expect(live.errors[0].message).toContain('metric bug');

    const metadata = JSON.parse(readFileSync(join(out, 'metadata.json'), 'utf8'));
    expect(metadata).toMatchObject({ status: 'completed', model: 'fake-1', num_tasks: 5, rollouts_per_task: 2, sampling_args: { temperature: 0.7, max_tokens: 32, seed: 3 } });
    expect(metadata.summary.reward.mean).toBeCloseTo(0.8);
    // The rubric as the file's own process declared it, for tabrl audit.
    expect(metadata.reward_weights).toEqual({ exactReward: 1, brokenMetric: 0, replyLengthMetric: 0 });
    expect(metadata.metric_kinds).toEqual({ brokenMetric: 'check', replyLengthMetric: 'info' });
    expect(server.requests.at(-1)).toMatchObject({ model: 'fake-1', temperature: 0.7, max_tokens: 32 });
    expect(server.authorizations.at(-1)).toBe('Bearer sk-secret');
  });

  test('evaluates a built-in multi-turn environment by name (Wordle, played by the expert behind the server)', async () => {
    await withFakeOpenAIServer(async (messages, request) => String(await wordleExpertPolicy(messages, request)), async (expert) => {
      const out = join(dir, 'wordle-out');
      const { code, stdout } = await tabrl(['eval', 'wordle', '--base-url', expert.baseURL, '--model', 'expert', '-n', '3', '--out', out, '--json']);
      expect(code).toBe(0);
      const summary = JSON.parse(stdout);
      expect(summary.numRollouts).toBe(3);
      expect(summary.scores.winReward).toBe(1);
      expect(summary.passRate).toBe(1);
      const games = readResults(out);
      // Every game is multi-turn and ends on the environment's last feedback.
      for (const game of games) expect(game.completion.at(-1).role).toBe('user');
      // tabrl audit reads the rubric's metric kinds from metadata.json: the wins' invalid-move count of
      // 0 is a lower-is-better count, not a failed check; told otherwise, it raises the false alarm.
      expect(games.every((game) => game.scores.invalidGuessesMetric === 0)).toBe(true);
      const audited = await tabrl(['audit', out, '--out', join(dir, 'wordle-audit')]);
      expect(audited.code).toBe(0);
      expect(audited.stdout).toContain('metric-disagrees: not run (no pass/fail checks (weight-0 scores declared as checks))');
      const told = await tabrl(['audit', out, '--metrics', '{"invalidGuessesMetric": "check"}', '--out', join(dir, 'wordle-audit-check')]);
      expect(told.stdout).toContain('3 rollouts scored a high reward (≥ ');
      const wrong = await tabrl(['audit', out, '--metrics', '{"invalidGuessesMetric": "fewerIsBetter"}', '--out', join(dir, 'wordle-audit-bad')]);
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toContain('--metrics: the kind of invalidGuessesMetric must be one of check, higherIsBetter, lowerIsBetter, info, got "fewerIsBetter"');
    });
  });

  test('--model local:tiny evaluates against the in-process model and records the sampled tokens', async () => {
    const out = join(dir, 'local-out');
    const { code, stderr } = await tabrl(['eval', 'reverse-text', '--model', 'local:tiny', '--env-args', '{"compact": true, "numTasks": 50}', '-n', '2', '-r', '2', '--max-tokens', '4', '--seed', '1', '--out', out]);
    expect(stderr).toContain('wrote 4 rollouts');
    expect(code).toBe(0);
    const lines = readResults(out);
    for (const line of lines) {
      const [turn] = line.turn_tokens;
      expect(turn.completionIds).toHaveLength(turn.completionLogprobs.length);
      expect(turn.completionIds.length).toBeGreaterThan(0);
      expect(turn.completionLogprobs.every((logprob: number) => logprob <= 0)).toBe(true);
      expect(turn.promptIds[0]).toBe(257); // the byte tokenizer's <|bos|>
    }
  });

  test('an unreachable endpoint stops with what was tried, keeping the metadata', async () => {
    const out = join(dir, 'unreachable');
    const { code, stderr } = await tabrl(['eval', join(dir, 'reverse.ts'), '--base-url', 'http://127.0.0.1:9/v1', '--model', 'm', '--out', out]);
    expect(code).toBe(1);
    expect(stderr).toContain('could not reach http://127.0.0.1:9/v1/chat/completions');
    expect(JSON.parse(readFileSync(join(out, 'metadata.json'), 'utf8')).status).toBe('failed');
  });

  test('an env file with a type error is reported with file, line and column', async () => {
    const path = join(dir, 'typo.ts');
    writeFileSync(path, `import { SingleTurnEnv } from 'tabrl';\nexport default function loadEnvironment() {\n  return new SingleTurnEnv({ datasett: [] });\n}\n`);
    const { code, stderr } = await tabrl(['eval', path, '--base-url', server.baseURL, '--model', 'm']);
    expect(code).toBe(1);
    expect(stderr).toContain(`${path}:3:`);
    expect(stderr).toContain('does not compile');
    expect(stderr).toContain('datasett');
  });

  test('an env file with a syntax error is reported with file and line even without type-checking', async () => {
    const path = join(dir, 'syntax.ts');
    writeFileSync(path, `import { SingleTurnEnv } from 'tabrl';\nexport default function loadEnvironment() {\n  return new SingleTurnEnv({ dataset: [ });\n}\n`);
    const { code, stderr } = await tabrl(['eval', path, '--base-url', server.baseURL, '--model', 'm', '--no-typecheck']);
    expect(code).toBe(1);
    expect(stderr).toMatch(new RegExp(`could not load ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: .*syntax\\.ts:3:`));
  });

  test('an unknown environment name lists the built-ins; bad flags are usage errors', async () => {
    const unknown = await tabrl(['eval', 'wordel', '--base-url', server.baseURL, '--model', 'm']);
    expect(unknown.code).toBe(2); // a command-line mistake, as every other bad flag
    expect(unknown.stderr).toContain('unknown environment "wordel"; did you mean "wordle"? Built-in environments: ');
    expect(unknown.stderr).toContain('wordle');
    const badArgs = await tabrl(['eval', join(dir, 'reverse.ts'), '--base-url', server.baseURL, '--model', 'm', '--env-args', '{oops']);
    expect(badArgs.code).toBe(2);
    expect(badArgs.stderr).toContain('--env-args is not valid JSON');
    const noModel = await tabrl(['eval', join(dir, 'reverse.ts'), '--base-url', server.baseURL]);
    expect(noModel.code).toBe(2);
    expect(noModel.stderr).toContain('--model is required');
  });
});

describe('docs/environments.md', () => {
  test('the worked example type-checks and plays a game through tabrl eval', async () => {
    const doc = readFileSync(fileURLToPath(new URL('../../../docs/environments.md', import.meta.url)), 'utf8');
    const example = doc.split('## Worked example')[1]!.match(/```ts\n([\s\S]*?)```/)![1]!;
    const path = join(dir, 'guess-the-number.ts');
    writeFileSync(path, example);
    // A bisecting player: it reads the feedback so far and guesses the middle of what is left.
    const bisectPlayer: FakePolicy = (messages) => {
      let low = 1;
      let high = 100;
      let last = 0;
      for (const message of messages) {
        if (message.role === 'assistant') last = Number(message.content.match(/<guess>(\d+)<\/guess>/)![1]);
        if (message.role === 'user' && message.content === 'Higher.') low = last + 1;
        if (message.role === 'user' && message.content === 'Lower.') high = last - 1;
      }
      return `<guess>${Math.floor((low + high) / 2)}</guess>`;
    };
    await withFakeOpenAIServer(bisectPlayer, async (bisect) => {
      const out = join(dir, 'guess-out');
      const { code, stderr } = await tabrl(['eval', path, '--base-url', bisect.baseURL, '--model', 'bisect', '-n', '5', '--out', out]);
      expect(stderr).toContain('wrote 5 rollouts');
      expect(code).toBe(0);
      const lines = readResults(out);
      for (const line of lines) {
        expect(line.state.won).toBe(true);
        expect(line.scores.guessCountMetric).toBeLessThanOrEqual(7);
        expect(line.reward).toBeCloseTo(1 + 0.5 / line.state.guesses.length + 0.2);
      }
    });
  });
});
