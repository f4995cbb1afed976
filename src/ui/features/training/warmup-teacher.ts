/**
 * The warm-up's teacher: who makes the SFT demonstrations that the in-tab model (always the
 * student) is trained on — the built-in's scripted expert (for tasks planted backwards, their
 * reference paths: the planted calls, then the answer), the OpenAI-compatible endpoint, or the
 * WebLLM model — and which of its rollouts are kept (the environment's pass threshold, as
 * src/rl/sft-data.ts keeps them). Pure of the store and the workers: callers pass the clients in.
 */
import type { ChatClient, Message, RolloutRecord } from '../../../envs/index.ts';
import { brokenRewardsReason } from '../../../envs/broken-rewards.ts';
import type { TeacherKind } from '../policy/policy-slice.ts';

/** A teacher ready to roll out: its client, the model name sent with requests, and how it is named in messages. */
export interface Teacher {
  kind: TeacherKind;
  client: ChatClient;
  model: string;
  label: string;
  /** Rollouts in flight at once (WebLLM answers one request at a time anyway). */
  concurrency: number;
  /** Set for the expert of tasks planted backwards: their reference paths are played in the sandbox, where the tasks are (`client` is then never called). */
  plantedPaths?: true;
}

/** Where each teacher's client comes from; only the chosen one is called (so WebLLM loads only when it teaches). */
export interface TeacherSources {
  /** The built-in's expert; undefined when the file did not start from a built-in. */
  expert?: () => Promise<ChatClient>;
  /** Whether the loaded environment's demonstration tasks were planted backwards with reference paths (`EnvironmentInfo.plantedPaths`): then they are the expert when there is no built-in's. */
  plantedPaths?: boolean;
  endpoint: () => ChatClient;
  webllm: () => Promise<ChatClient>;
  /** The endpoint's base URL and model name, and the WebLLM model id, for labels and requests. */
  endpointModel: string;
  endpointURL: string;
  webllmModel: string;
  /** The evaluation settings' concurrency, used for the endpoint. */
  concurrency: number;
}

/** Builds the chosen teacher; throws saying what to do when the expert is chosen for a file without one. */
export async function buildTeacher(kind: TeacherKind, sources: TeacherSources): Promise<Teacher> {
  if (kind === 'expert') {
    if (!sources.expert && sources.plantedPaths) {
      const unused: ChatClient = {
        chat: {
          completions: {
            create: async () => {
              throw new Error('the planted tasks play their reference paths in the sandbox; no model is asked');
            },
          },
        },
      };
      return { kind, client: unused, model: 'planted-paths', label: "the planted tasks' reference paths", concurrency: 16, plantedPaths: true };
    }
    if (!sources.expert)
      throw new Error(
        'The scripted expert belongs to a built-in environment (or to tasks planted backwards) and this file did not start from one: choose the endpoint or a WebLLM model as the warm-up teacher.',
      );
    return { kind, client: await sources.expert(), model: 'expert', label: "the built-in's expert", concurrency: 16 };
  }
  if (kind === 'endpoint')
    return { kind, client: sources.endpoint(), model: sources.endpointModel, label: `the endpoint (${sources.endpointModel} at ${sources.endpointURL})`, concurrency: sources.concurrency };
  return { kind, client: await sources.webllm(), model: sources.webllmModel, label: `WebLLM ${sources.webllmModel}`, concurrency: 1 };
}

/** Whether a teacher's rollout becomes a demonstration: it passed the environment's threshold and no model call or hook failed. */
export function isDemonstration(record: RolloutRecord): boolean {
  return record.passed && record.errors.every((error) => error.source === 'reward');
}

/** The kept rollouts' transcripts (prompt + completion), in task order so a continued warm-up sees the same batches. */
export function demonstrationTranscripts(records: readonly RolloutRecord[]): Message[][] {
  return records
    .filter(isDemonstration)
    .sort((a, b) => a.taskIndex - b.taskIndex || a.rolloutIndex - b.rolloutIndex)
    .map((record) => [...record.prompt, ...record.completion]);
}

/**
 * Why a warm-up must not go on when the teacher's rollouts were scored by rewards that measure
 * nothing (every weighted reward function failed in every one: src/envs/broken-rewards.ts), so they
 * cannot pick demonstrations; undefined when the rewards measure something.
 */
export function brokenRewardsMessage(teacher: Pick<Teacher, 'label'>, records: readonly RolloutRecord[], weights: Readonly<Record<string, number>>): string | undefined {
  const reason = brokenRewardsReason(records, weights);
  return reason && `The ${records.length} rollouts by ${teacher.label}: ${reason}; nothing was trained. Fix the reward function and warm up again.`;
}

/** The failure when none of the teacher's rollouts passed: nothing is trained. */
export function noDemonstrationsMessage(teacher: Pick<Teacher, 'label'>, records: readonly RolloutRecord[]): string {
  const failedCalls = records.filter((record) => record.errors.some((error) => error.source === 'client'));
  const detail = failedCalls.length > 0 ? ` ${failedCalls.length} of them failed to get an answer (first: ${failedCalls[0]!.errors.find((error) => error.source === 'client')!.message}).` : '';
  return `None of the ${records.length} rollouts by ${teacher.label} passed the environment's threshold, so nothing was trained.${detail} Try a stronger teacher, more demonstrations, or check the rewards with Evaluate.`;
}
