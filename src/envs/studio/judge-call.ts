/**
 * Asking a judge model and reading its verdict, for every part of the environment studio. A judge
 * that cannot be reached, refuses the request (4xx) or never gives a verdict raises a `JudgeError`:
 * the studio treats it as an error of the run (it stops and says so), never as a silent score of 0.
 */
import { ChatClientError, type ChatClient } from '../client.ts';
import { errorMessage } from '../../common/error-message.ts';

/** Why a judge call failed: no answer from the endpoint, a refused request, a reply without a verdict, or one off the scale its prompt asked for. */
export type JudgeErrorKind = 'unreachable' | 'rejected' | 'no-verdict' | 'off-scale' | 'aborted';

/**
 * A judge failure. An unreachable or refusing judge is `fatal`: a rubric records it as a fatal error,
 * so an evaluation stops on it. A reply without a verdict, or off the scale its prompt asked for, is
 * recorded on the rollout and counted in the summary's errors (the rollout is not scored as a silent 0).
 */
export class JudgeError extends Error {
  override readonly name = 'JudgeError';
  /** True when the same judge would fail every other rollout alike (unreachable, refused). */
  readonly fatal: boolean;

  constructor(
    message: string,
    readonly kind: JudgeErrorKind,
  ) {
    super(message);
    this.fatal = kind === 'unreachable' || kind === 'rejected';
  }
}

/** Which judge to ask and how. */
export interface JudgeTarget {
  client: ChatClient;
  /** Model name sent to the judge (default "default"). */
  model?: string;
  /** Tokens the judge may write (default 512: it writes reasons). */
  maxTokens?: number;
  signal?: AbortSignal;
}

/** Sends `prompt` to the judge (temperature 0) and returns its reply text; client failures become `JudgeError`s. */
export async function askJudge(target: JudgeTarget, prompt: string): Promise<string> {
  try {
    const reply = await target.client.chat.completions.create({
      model: target.model ?? 'default',
      messages: [{ role: 'user', content: prompt }],
      temperature: 0,
      max_tokens: target.maxTokens ?? 512,
      ...(target.signal ? { signal: target.signal } : {}),
    });
    return reply.choices[0]?.message.content ?? '';
  } catch (error) {
    throw toJudgeError(error);
  }
}

/** Turns a client failure into a `JudgeError` that says what happened and what to do. */
export function toJudgeError(error: unknown): JudgeError {
  if (error instanceof JudgeError) return error;
  const message = errorMessage(error);
  if (error instanceof ChatClientError) {
    if (error.kind === 'aborted') return new JudgeError('the judge call was cancelled', 'aborted');
    if (error.kind === 'auth' || error.kind === 'not_found' || error.kind === 'bad_request') {
      return new JudgeError(`the judge refused the request (${error.kind}): ${message}; check the judge's URL, model name and API key`, 'rejected');
    }
    return new JudgeError(`the judge is unreachable (${error.kind}): ${message}; check that the judge endpoint is running`, 'unreachable');
  }
  return new JudgeError(`the judge failed: ${message}`, 'unreachable');
}

/**
 * Reads a yes/no verdict: a "Verdict: yes" line wins, else the last line that is a bare yes/no
 * (ignoring punctuation and markdown), else a reply that starts with yes/no. Throws a `JudgeError`
 * of kind 'no-verdict' otherwise.
 */
export function parseYesNo(reply: string): boolean {
  const labelled = [...reply.matchAll(/verdict\s*[:=]\s*\**\s*(yes|no)\b/gi)].at(-1);
  if (labelled) return labelled[1]!.toLowerCase() === 'yes';
  const lines = reply
    .split('\n')
    .map((line) => line.replace(/[*_`#>.!\s]/g, '').toLowerCase())
    .filter((line) => line !== '');
  const bare = lines.reverse().find((line) => line === 'yes' || line === 'no');
  if (bare) return bare === 'yes';
  const start = /^\W*(yes|no)\b/i.exec(reply.trim());
  if (start) return start[1]!.toLowerCase() === 'yes';
  throw new JudgeError(`the judge's reply holds no yes/no verdict: "${reply.slice(0, 160)}"`, 'no-verdict');
}
