/**
 * The replies of `tabrl serve`'s sessions, written together: a reply is queued when its request is
 * answered and written at the end of the event loop's turn (a `setImmediate`), once every socket
 * that had a frame ready has been read and answered. A small write to a loopback socket costs little
 * in itself; what costs is waking a client that sleeps waiting for it (on this project's 2-core
 * virtual machine, the server spent a quarter of its time in `writev` with one write per answer as
 * it came, bench/serve.ts). Replies written back to back wake a client once for the lot. A reply
 * waits at most for the other requests that arrived in the same turn, and a reply to a lone request
 * goes out in the same turn as before.
 *
 * It neither builds replies nor decides when a session ends: whoever closes a socket calls
 * `flush()` first, so a reply queued before the close is not lost.
 */

/** Replies queued in this turn of the event loop, written together at its end. */
export class ReplyOutbox<Socket> {
  private readonly queued: { socket: Socket; text: string }[] = [];
  private scheduled = false;

  /** `write` sends one reply's text on its socket (and decides what to do with a socket that can no longer take it). */
  constructor(private readonly write: (socket: Socket, text: string) => void) {}

  /** Queues `text` for `socket`; replies to one socket keep their order. */
  queue(socket: Socket, text: string): void {
    this.queued.push({ socket, text });
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /** Writes every queued reply now, in the order queued. */
  flush(): void {
    this.scheduled = false;
    // A write may close a socket and so call flush() again: take the batch first.
    const batch = this.queued.splice(0);
    for (const { socket, text } of batch) this.write(socket, text);
  }
}
