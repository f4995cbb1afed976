import { describe, expect, test } from 'vitest';
import { OpenAIHttpClient } from '../../../src/envs/index.ts';
import { HeuristicStudioClient } from '../../../src/envs/studio/index.ts';
import { CliError } from '../../../src/cli/cli-error.ts';
import { judgeSettingsFromFlags, judgeUsage } from '../../../src/cli/judge.ts';
import { createRoleClient, roleOptions, roleSettingsFromFlags, roleUsage } from '../../../src/cli/model-roles.ts';

const error = (run: () => unknown) => {
  try {
    run();
  } catch (caught) {
    expect(caught).toBeInstanceOf(CliError);
    return (caught as CliError).message;
  }
  throw new Error('expected a CliError');
};

describe('model roles', () => {
  test('three flags per role, for parseArgs', () => {
    expect(Object.keys(roleOptions(['generator', 'judge']))).toEqual(['generator-base-url', 'generator-model', 'generator-api-key-env', 'judge-base-url', 'judge-model', 'judge-api-key-env']);
  });

  test('endpoint, local: and heuristic settings; absent roles are undefined unless required', () => {
    expect(roleSettingsFromFlags({ 'solver-base-url': 'http://x/v1', 'solver-model': 'm', 'solver-api-key-env': 'K' }, 'solver')).toEqual({ baseUrl: 'http://x/v1', model: 'm', apiKeyEnv: 'K' });
    expect(roleSettingsFromFlags({ 'solver-base-url': 'http://x/v1' }, 'solver')).toEqual({ baseUrl: 'http://x/v1', model: 'default' });
    expect(roleSettingsFromFlags({ 'policy-model': 'local:tiny' }, 'policy')).toEqual({ model: 'local:tiny' });
    expect(roleSettingsFromFlags({ 'judge-model': 'heuristic' }, 'judge')).toEqual({ model: 'heuristic' });
    expect(roleSettingsFromFlags({}, 'generator')).toBeUndefined();
  });

  test('one-line errors for every mistake', () => {
    expect(error(() => roleSettingsFromFlags({}, 'generator', { required: true, purpose: '(writes questions)' }))).toBe('--generator-model is required (writes questions): give --generator-base-url URL --generator-model NAME, or --generator-model local:tiny');
    expect(error(() => roleSettingsFromFlags({ 'solver-model': 'gpt' }, 'solver'))).toContain('--solver-model gpt needs --solver-base-url');
    expect(error(() => roleSettingsFromFlags({ 'solver-api-key-env': 'K' }, 'solver'))).toContain('--solver-api-key-env needs --solver-base-url');
    expect(error(() => roleSettingsFromFlags({ 'policy-model': 'heuristic' }, 'policy'))).toContain('only the studio\'s generator, solver, judge, attacker, reviewer and simulator');
    expect(error(() => roleSettingsFromFlags({ 'solver-model': 'local:tiny', 'solver-base-url': 'http://x/v1' }, 'solver'))).toContain('leave out --solver-base-url');
    expect(error(() => roleSettingsFromFlags({ 'judge-model': 'local:' }, 'judge'))).toContain('needs a model after the colon');
  });

  test("eval's and train's judge goes through the same parser, endpoints only", () => {
    expect(judgeSettingsFromFlags({ 'judge-base-url': 'http://j/v1', 'judge-model': 'g', 'judge-api-key-env': 'J' })).toEqual({ baseUrl: 'http://j/v1', model: 'g', apiKeyEnv: 'J' });
    expect(judgeSettingsFromFlags({})).toBeUndefined();
    expect(error(() => judgeSettingsFromFlags({ 'judge-model': 'grader' }))).toContain('--judge-model grader needs --judge-base-url');
    expect(error(() => judgeSettingsFromFlags({ 'judge-model': 'local:tiny' }))).toContain('a local model cannot play the judge here');
    expect(judgeUsage(26)).toContain('--judge-model NAME      the judge\'s model name, passed as args.judgeModel (default "default")\n');
    expect(roleUsage(['solver'], 30)).toContain('or local:tiny / local:<model-dir>, or heuristic (offline rules)');
  });

  test('clients: the key is read from its variable; heuristic needs no endpoint', async () => {
    expect(await createRoleClient('judge', { model: 'heuristic' })).toBeInstanceOf(HeuristicStudioClient);
    expect(await createRoleClient('solver', { baseUrl: 'http://x/v1', model: 'm' })).toBeInstanceOf(OpenAIHttpClient);
    await expect(createRoleClient('solver', { baseUrl: 'http://x/v1', model: 'm', apiKeyEnv: 'TABRL_TEST_UNSET_KEY' })).rejects.toThrow('--solver-api-key-env TABRL_TEST_UNSET_KEY: the environment variable TABRL_TEST_UNSET_KEY is not set');
    await expect(createRoleClient('solver', { baseUrl: 'ftp://x', model: 'm' })).rejects.toThrow('--solver-base-url ftp://x:');
  });
});
