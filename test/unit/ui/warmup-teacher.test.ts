/**
 * The warm-up teacher: the chosen teacher's client (and only it) is used, the expert needs a
 * built-in, rollouts that pass the environment's threshold become demonstrations in task order, and
 * a teacher with no passing rollout yields a message saying nothing was trained. Rollouts run
 * through the real `evaluate` on reverse-text with scripted clients.
 */
import { describe, expect, test } from 'vitest';
import loadReverseText, { reverseTextExpertPolicy } from '../../../src/envs/builtin/reverse-text.ts';
import { ChatClientError, evaluate, ScriptedClient, type ChatClient, type RolloutRecord } from '../../../src/envs/index.ts';
import { brokenRewardsMessage, buildTeacher, demonstrationTranscripts, isDemonstration, noDemonstrationsMessage, type TeacherSources } from '../../../src/ui/features/training/warmup-teacher.ts';

function sources(overrides: Partial<TeacherSources> = {}): TeacherSources & { used: string[] } {
  const used: string[] = [];
  return {
    used,
    expert: async () => { used.push('expert'); return new ScriptedClient(reverseTextExpertPolicy); },
    endpoint: () => { used.push('endpoint'); return new ScriptedClient(['x']); },
    webllm: async () => { used.push('webllm'); return new ScriptedClient(['y']); },
    endpointModel: 'gpt-x',
    endpointURL: 'http://localhost:8000/v1',
    webllmModel: 'Qwen2.5-0.5B-Instruct-q4f16_1-MLC',
    concurrency: 4,
    ...overrides,
  };
}

async function rollOut(client: ChatClient, numTasks = 6): Promise<RolloutRecord[]> {
  const env = loadReverseText({});
  const result = await evaluate(env, client, { tasks: env.dataset.slice(0, numTasks), concurrency: 3, stopOnFatalError: false });
  return result.records;
}

describe('warm-up teacher', () => {
  test('each teacher kind uses only its own client, with its model name and concurrency', async () => {
    for (const [kind, model, concurrency] of [['expert', 'expert', 16], ['endpoint', 'gpt-x', 4], ['webllm', 'Qwen2.5-0.5B-Instruct-q4f16_1-MLC', 1]] as const) {
      const from = sources();
      const teacher = await buildTeacher(kind, from);
      expect(from.used).toEqual([kind]);
      expect(teacher).toMatchObject({ kind, model, concurrency });
    }
    expect((await buildTeacher('webllm', sources())).label).toBe('WebLLM Qwen2.5-0.5B-Instruct-q4f16_1-MLC');
  });

  test('the expert teacher needs a built-in; the message says which teachers to choose instead', async () => {
    await expect(buildTeacher('expert', sources({ expert: undefined }))).rejects.toThrow(/did not start from one: choose the endpoint or a WebLLM model/);
  });

  test('without a built-in, tasks planted backwards are the expert: their paths are played in the sandbox and no client is used', async () => {
    const from = sources({ expert: undefined, plantedPaths: true });
    const teacher = await buildTeacher('expert', from);
    expect(teacher).toMatchObject({ kind: 'expert', model: 'planted-paths', label: "the planted tasks' reference paths", plantedPaths: true });
    expect(from.used).toEqual([]);
    await expect(teacher.client.chat.completions.create({ model: 'x', messages: [] })).rejects.toThrow(/no model is asked/);
    // A built-in's expert stays the expert even when its tasks are planted.
    expect(await buildTeacher('expert', sources({ plantedPaths: true }))).not.toHaveProperty('plantedPaths');
  });

  test('a good teacher\'s passing rollouts become demonstrations, in task order', async () => {
    const teacher = await buildTeacher('endpoint', sources({ endpoint: () => new ScriptedClient(reverseTextExpertPolicy) }));
    const records = await rollOut(teacher.client);
    expect(records.every(isDemonstration)).toBe(true);
    const transcripts = demonstrationTranscripts([...records].reverse());
    expect(transcripts).toHaveLength(6);
    expect(transcripts).toEqual([...records].sort((a, b) => a.taskIndex - b.taskIndex).map((record) => [...record.prompt, ...record.completion]));
    for (const messages of transcripts) expect(messages.at(-1)!.role).toBe('assistant');
  });

  test('only rollouts that pass the threshold are kept: a teacher that answers half the tasks wrong keeps half', async () => {
    let call = 0;
    const halfRight = new ScriptedClient((messages, request) => (call++ % 2 === 0 ? reverseTextExpertPolicy(messages, request) : 'no idea'));
    const records = await rollOut(halfRight);
    const kept = demonstrationTranscripts(records);
    expect(kept.length).toBe(records.filter((record) => record.passed).length);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(records.length);
  });

  test('a teacher with no passing rollout gives a clear message, and no demonstrations', async () => {
    const records = await rollOut(new ScriptedClient(['wrong']));
    expect(demonstrationTranscripts(records)).toEqual([]);
    expect(noDemonstrationsMessage({ label: 'WebLLM m' }, records)).toBe('None of the 6 rollouts by WebLLM m passed the environment\'s threshold, so nothing was trained. Try a stronger teacher, more demonstrations, or check the rewards with Evaluate.');
  });

  test('rewards that measure nothing (every weighted function failed in every rollout) stop the warm-up, naming the function; a partial failure does not', () => {
    const failed = (name: string) => ({ stopReason: 'completed', errors: [{ source: 'reward', name, message: `${name} threw: bug; scored 0` }] }) as unknown as RolloutRecord;
    const records = [failed('exactReward'), failed('exactReward')];
    expect(brokenRewardsMessage({ label: 'the expert' }, records, { exactReward: 1, lengthMetric: 0 })).toBe(
      'The 2 rollouts by the expert: the reward function exactReward failed in every rollout, so the rewards are not measurements; the first error: exactReward threw: bug; scored 0; nothing was trained. Fix the reward function and warm up again.',
    );
    expect(brokenRewardsMessage({ label: 'the expert' }, records, { exactReward: 1, lengthReward: 1 })).toBeUndefined();
  });

  test('a teacher whose calls fail: nothing is kept, and the message names the failure', async () => {
    const failing: ChatClient = { chat: { completions: { create: async () => { throw new ChatClientError('WebLLM could not download "m"', 'network'); } } } };
    const records = await rollOut(failing, 2);
    expect(demonstrationTranscripts(records)).toEqual([]);
    expect(noDemonstrationsMessage({ label: 'WebLLM m' }, records)).toMatch(/2 of them failed to get an answer \(first: WebLLM could not download "m"\)/);
  });
});
