/**
 * The reply outbox of `tabrl serve`: replies queued in one turn of the event loop are written
 * together at its end, in order, and `flush()` writes them at once (what a closing socket needs).
 */
import { describe, expect, test } from 'vitest';
import { ReplyOutbox } from '../../../src/cli/serve/reply-outbox.ts';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('ReplyOutbox', () => {
  test('replies queued in one turn are written together at its end, in the order queued', async () => {
    const written: string[] = [];
    const outbox = new ReplyOutbox<string>((socket, text) => written.push(`${socket}:${text}`));
    outbox.queue('a', '1');
    outbox.queue('b', '1');
    await Promise.resolve();
    outbox.queue('a', '2');
    expect(written).toEqual([]);
    await nextTurn();
    expect(written).toEqual(['a:1', 'b:1', 'a:2']);
    outbox.queue('b', '2');
    await nextTurn();
    expect(written).toEqual(['a:1', 'b:1', 'a:2', 'b:2']);
  });

  test('flush() writes what is queued at once, once: a write that flushes again (a socket closing) writes nothing twice', async () => {
    const written: string[] = [];
    const outbox: ReplyOutbox<string> = new ReplyOutbox<string>((socket, text) => {
      written.push(`${socket}:${text}`);
      if (text === 'close') outbox.flush();
    });
    outbox.queue('a', 'close');
    outbox.queue('b', 'reply');
    outbox.flush();
    expect(written).toEqual(['a:close', 'b:reply']);
    await nextTurn();
    expect(written).toEqual(['a:close', 'b:reply']);
  });
});
