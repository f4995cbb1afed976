/**
 * The red team's target in the tab: the open environment loaded in a sandbox session, each reply
 * scored by a real rollout whose policy (`ReplyClient`) says exactly that reply. The sandbox hands
 * out no task text, so a task's question is read from one rollout of an empty reply. Host-free (the
 * session is passed in), so tests drive it with a session of their own.
 */
import { type ChatClient, type ChatCompletion, type ChatRequest, type RolloutRecord } from '../../../envs/index.ts';
import { describeRewardWeights, type RedTeamTarget } from '../../../envs/studio/index.ts';
import type { SandboxSession } from '../../../workers/sandbox-bridge.ts';

/** A policy that answers every request with the reply the search is scoring now. */
export class ReplyClient implements ChatClient {
  reply = '';

  readonly chat = {
    completions: {
      create: async (request: ChatRequest): Promise<ChatCompletion> => ({
        id: 'red-team',
        model: request.model,
        choices: [{ index: 0, message: { role: 'assistant', content: this.reply }, finish_reason: 'stop' }],
      }),
    },
  };
}

/** The target of a sandbox session: task `i` is scored by evaluating the first i + 1 evaluation tasks with the reply as the policy, and reading task i's record. */
export function sandboxRedTeamTarget(session: Pick<SandboxSession, 'info' | 'evaluate'>, policy: { reply: string }, name: string): RedTeamTarget {
  const { info } = session;
  const run = async (index: number, reply: string) => {
    policy.reply = reply;
    const records: RolloutRecord[] = [];
    const result = await session.evaluate({ numTasks: index + 1, rolloutsPerTask: 1, concurrency: 1, samplingArgs: { max_tokens: 512, temperature: 0 }, model: 'red-team', split: 'eval' }, (record) =>
      records.push(record),
    );
    return { record: records.find((record) => record.taskIndex === index), stoppedEarly: result.stoppedEarly };
  };
  const known = new Map<number, { question: string; answer?: string }>();
  return {
    name,
    numTasks: info.numEvaluationTasks,
    passThreshold: info.passThreshold,
    rubric: describeRewardWeights(info.rewardNames.map((reward, i) => ({ name: reward, weight: info.rewardWeights[i] ?? 0 }))),
    weights: Object.fromEntries(info.rewardNames.map((reward, i) => [reward, info.rewardWeights[i] ?? 0])),
    task: async (index) => {
      // The sandbox hands out no task text: one empty reply is rolled out to read the task's prompt.
      if (!known.has(index)) {
        const { record, stoppedEarly } = await run(index, '');
        if (!record) throw new Error(`could not read evaluation task ${index} of ${name}${stoppedEarly ? `: ${stoppedEarly}` : ''}`);
        const question = [...record.prompt].reverse().find((message) => message.role === 'user')?.content ?? '';
        known.set(index, { question, ...(record.answer ? { answer: record.answer } : {}) });
      }
      return known.get(index)!;
    },
    score: async (index, reply) => {
      const { record, stoppedEarly } = await run(index, reply);
      if (!record) return { reward: 0, scores: {}, errors: [], stoppedEarly: stoppedEarly ?? 'no rollout was recorded' };
      return { reward: record.reward, scores: record.scores, errors: record.errors.map((error) => `${error.name}: ${error.message}`), ...(stoppedEarly ? { stoppedEarly } : {}) };
    },
  };
}
