/**
 * The engine's device and kernels in a module Web Worker (where the app runs them): the same code
 * path as the page gets an adapter and passes a kernel check. No adapter in the worker fails.
 */
import { expect, test } from 'vitest';

test('a kernel check passes inside a module worker', async () => {
  const worker = new Worker(new URL('./kernel-check.worker.ts', import.meta.url), { type: 'module' });
  try {
    const reply = await new Promise<{ ok: boolean; message: string }>((resolve, reject) => {
      worker.onmessage = (event: MessageEvent<{ ok: boolean; message: string }>) => resolve(event.data);
      worker.onerror = (event) => reject(new Error(`worker failed to start: ${event.message}`));
    });
    expect(reply.ok, reply.message).toBe(true);
  } finally {
    worker.terminate();
  }
});
