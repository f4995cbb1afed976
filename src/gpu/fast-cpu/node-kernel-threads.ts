/**
 * Node worker threads for the WASM kernels: starts count − 1 worker_threads running the pool's
 * worker loop (shared-kernel-threads.ts) on the kernels' shared WebAssembly.Memory. Node only; the
 * browser's Web Workers are web-kernel-threads.ts.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { WasmKernels } from './wasm-kernels.ts';
import { createPooledWasmKernels, KERNEL_WORKER_LOOP } from './shared-kernel-threads.ts';

// The worker, as plain JavaScript (eval: true) so it needs no TypeScript loader.
const WORKER_SOURCE = `${KERNEL_WORKER_LOOP}
const { workerData, parentPort } = require('node:worker_threads');
runKernelWorker(workerData, (error) => parentPort.postMessage(error === undefined ? 'ready' : { error }));
`;

/** The number of threads the fast CPU backend uses by default in Node: every core the OS offers. */
export function defaultThreadCount(): number {
  return availableParallelism();
}

/**
 * WasmKernels on `threads` threads (the caller and threads − 1 worker threads; 1 = no workers), always
 * on a shared memory, so that the backend's weights, gradients and activations can live in it (allocate()).
 */
export async function createNodeWasmKernels(threads: number = defaultThreadCount()): Promise<WasmKernels> {
  return createPooledWasmKernels(
    threads,
    true,
    async (workers) => {
      const started = await Promise.all(
        workers.map((workerData) => {
          const worker = new Worker(WORKER_SOURCE, { eval: true, workerData });
          worker.unref();
          return new Promise<Worker>((resolve, reject) => {
            worker.once('message', (message: unknown) =>
              message === 'ready' ? resolve(worker) : reject(new Error(`a kernel worker thread could not start: ${(message as { error: string }).error}`)),
            );
            worker.once('error', reject);
          });
        }),
      );
      return () => started.forEach((worker) => void worker.terminate());
    },
    true,
  );
}
