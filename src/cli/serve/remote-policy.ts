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

/** A ChatClient answered from outside: by `answer()`, one parked request at a time. */
export class RemotePolicy implements ChatClient {
  /** The replies given so far, in order, replayed when the rollout restarts. */
  private readonly answers: ChatCompletion[] = [];
  private callsThisAttempt = 0;
  private lastMessageCount = 0;
  /** Requests shown to the client so far (one per turn). */
  private delivered = 0;
  private parked: Parked | undefined;
  private ready: PolicyEvent | undefined;
  private waiting: ((event: PolicyEvent) => void) | undefined;
  private cancelled: string | undefined;

  readonly chat = { completions: { create: (request: ChatRequest) => this.create(request) } };

  private create(request: ChatRequest): Promise<ChatCompletion> {
    if (this.cancelled !== undefined) return Promise.reject(new ChatClientError(this.cancelled, 'aborted'));
    // A conversation no longer than the last one seen is the rollout starting over.
    if (request.messages.length <= this.lastMessageCount) this.callsThisAttempt = 0;
    this.lastMessageCount = request.messages.length;
    const replay = this.answers[this.callsThisAttempt];
    this.callsThisAttempt += 1;
    if (replay) return Promise.resolve(structuredClone(replay));
    const turn = this.answers.length;
    return new Promise<ChatCompletion>((resolve, reject) => {
      const onAbort = () => {
        if (this.parked?.request === request) this.rejectParked('the episode was cancelled');
      };
      // The listener goes when the request is settled, so a long episode does not pile them up on one signal.
      const settled =
        <T>(settle: (value: T) => void) =>
        (value: T) => {
          request.signal?.removeEventListener('abort', onAbort);
          settle(value);
        };
      // A restarted rollout asking the turn the client already sees: it takes the place of the dead attempt's request, unannounced.
      const superseded = this.parked;
      this.parked = { request, resolve: settled(resolve), reject: settled(reject) };
      superseded?.reject(new ChatClientError('the rollout started over', 'aborted'));
      request.signal?.addEventListener('abort', onAbort, { once: true });
      if (turn < this.delivered) return;
      this.delivered += 1;
      this.deliver({ kind: 'request', request });
    });
  }

  /** Answers the parked request with the client's message as the model's completion. */
  answer(message: Message): void {
    const parked = this.parked;
    if (!parked) throw new Error('RemotePolicy.answer: no request is waiting for a reply');
    this.parked = undefined;
    const completion: ChatCompletion = {
      id: `served-${this.answers.length}`,
      model: parked.request.model,
      choices: [{ index: 0, message, finish_reason: message.tool_calls && message.tool_calls.length > 0 ? 'tool_calls' : 'stop' }],
    };
    this.answers.push(structuredClone(completion));
    parked.resolve(completion);
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
