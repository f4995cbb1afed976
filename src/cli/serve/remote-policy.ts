/**
 * The policy of a served episode: a `ChatClient` whose model lives on the other end of a socket.
 * `create()` parks the environment's request until the client's next step answers it, so the
 * environment's own rollout loop (and its rubric) runs unchanged while a remote trainer plays the
 * model. The environment's side waits in `nextEvent()` for the next parked request or the end of
 * the rollout.
 *
 * A rollout that an environment file's process restarts (it was killed for another rollout's hang)
 * asks again from its first turn: the replies given so far are replayed in order, and the request
 * after them parks as usual, so the client never sees the restart.
 *
 * It runs once per turn of every served episode, so it allocates little: no closure per request, one
 * abort listener per signal (not one per request), and a reply kept for replay is a shallow copy of
 * the message (strings are immutable; only tool calls are copied deeply).
 *
 * Not a session and not a transport: it knows nothing of WebSockets or observations.
 */
import { ChatClientError, type ChatClient, type ChatCompletion, type ChatRequest, type Message, type Trajectory } from '../../envs/index.ts';

/** What the episode waits for next: a model call to answer, the finished rollout, or the episode's cancellation (its rollout may still be finishing). */
export type PolicyEvent = { kind: 'request'; request: ChatRequest } | { kind: 'done'; trajectory: Trajectory } | { kind: 'cancelled'; reason: string };

interface Parked {
  request: ChatRequest;
  resolve(completion: ChatCompletion): void;
  reject(error: Error): void;
}

/** A reply given by the client, kept to replay when the rollout starts over. */
interface GivenAnswer {
  model: string;
  message: Message;
}

/** A ChatClient answered from outside: by `answer()`, one parked request at a time. */
export class RemotePolicy implements ChatClient {
  /** The replies given so far, in order, replayed when the rollout restarts. */
  private readonly answers: GivenAnswer[] = [];
  private callsThisAttempt = 0;
  private lastMessageCount = 0;
  /** Requests shown to the client so far (one per turn). */
  private delivered = 0;
  private parked: Parked | undefined;
  private ready: PolicyEvent | undefined;
  private waiting: ((event: PolicyEvent) => void) | undefined;
  private cancelled: string | undefined;
  /** The last request signal listened to: a rollout (or a restarted attempt of it) passes the same signal with each of its requests. */
  private watchedSignal: AbortSignal | undefined;

  // A bound method, not an arrow function: the build names every arrow function it makes (esbuild keepNames), which costs more than the binding, once per episode.
  readonly chat = { completions: { create: this.create.bind(this) } };

  /** Made at the first request with a signal: that signal aborting fails the parked request if it is one of that signal's (a dead attempt's request was already superseded). */
  private onSignalAbort: ((event: Event) => void) | undefined;

  private create(request: ChatRequest): Promise<ChatCompletion> {
    if (this.cancelled !== undefined) return Promise.reject(new ChatClientError(this.cancelled, 'aborted'));
    // A conversation no longer than the last one seen is the rollout starting over.
    if (request.messages.length <= this.lastMessageCount) this.callsThisAttempt = 0;
    this.lastMessageCount = request.messages.length;
    const replay = this.answers[this.callsThisAttempt];
    this.callsThisAttempt += 1;
    if (replay) return Promise.resolve(completionOf(this.callsThisAttempt - 1, replay.model, copyMessage(replay.message)));
    const turn = this.answers.length;
    const signal = request.signal;
    if (signal !== undefined && signal !== this.watchedSignal) {
      this.watchedSignal = signal;
      this.onSignalAbort ??= (event) => {
        if (this.parked !== undefined && this.parked.request.signal === event.target) this.rejectParked('the episode was cancelled');
      };
      signal.addEventListener('abort', this.onSignalAbort, { once: true });
    }
    const promise = new Promise<ChatCompletion>((resolve, reject) => {
      // A restarted rollout asking the turn the client already sees: it takes the place of the dead attempt's request, unannounced.
      const superseded = this.parked;
      this.parked = { request, resolve, reject };
      superseded?.reject(new ChatClientError('the rollout started over', 'aborted'));
    });
    if (turn < this.delivered) return promise;
    this.delivered += 1;
    this.deliver({ kind: 'request', request });
    return promise;
  }

  /** Answers the parked request with the client's message as the model's completion. */
  answer(message: Message): void {
    const parked = this.parked;
    if (!parked) throw new Error('RemotePolicy.answer: no request is waiting for a reply');
    this.parked = undefined;
    this.answers.push({ model: parked.request.model, message: copyMessage(message) });
    parked.resolve(completionOf(this.answers.length - 1, parked.request.model, message));
  }

  /** The request waiting for the client's reply, if any. */
  get pendingRequest(): ChatRequest | undefined {
    return this.parked?.request;
  }

  /** Reports the finished rollout to whoever waits in `nextEvent()`. */
  finish(trajectory: Trajectory): void {
    this.deliver({ kind: 'done', trajectory });
  }

  /** The next parked request or the end of the rollout, whichever comes first. */
  nextEvent(): Promise<PolicyEvent> {
    const ready = this.ready;
    if (ready) {
      this.ready = undefined;
      return Promise.resolve(ready);
    }
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }

  /** Fails the parked request and every later one with an 'aborted' error, so the rollout stops at its next model call; whoever waits in `nextEvent()` hears of it at once. */
  cancel(reason: string): void {
    this.cancelled ??= reason;
    this.rejectParked(reason);
    if (this.waiting) this.deliver({ kind: 'cancelled', reason });
  }

  private rejectParked(reason: string): void {
    const parked = this.parked;
    this.parked = undefined;
    parked?.reject(new ChatClientError(reason, 'aborted'));
  }

  private deliver(event: PolicyEvent): void {
    const waiting = this.waiting;
    if (waiting) {
      this.waiting = undefined;
      waiting(event);
    } else this.ready = event;
  }
}

/** The completion that answers the rollout's `index`-th model call with `message`. */
function completionOf(index: number, model: string, message: Message): ChatCompletion {
  return { id: `served-${index}`, model, choices: [{ index: 0, message, finish_reason: message.tool_calls && message.tool_calls.length > 0 ? 'tool_calls' : 'stop' }] };
}

/** A copy of an assistant message that shares nothing mutable with it. */
function copyMessage(message: Message): Message {
  return message.tool_calls ? structuredClone(message) : { ...message };
}
