/**
 * Node worker threads for the WASM kernels: starts count − 1 worker_threads running the pool's
 * worker loop (shared-kernel-threads.ts) on the kernels' shared WebAssembly.Memory, with relaxed SIMD
 * switched on in Node 20 (where V8 has it behind a flag) so the fused multiply-add build runs. Node
 * only; the browser's Web Workers are web-kernel-threads.ts.
 */
import { availableParallelism } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { Worker } from 'node:worker_threads';
import { relaxedSimdValidates, type KernelSimd, type WasmKernels } from './wasm-kernels.ts';
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
 * Turns on V8's relaxed SIMD when this Node does not validate it yet (Node 20's V8 11.3 has it, final
 * opcodes included, behind --experimental-wasm-relaxed-simd; Node 22 ships it). V8's flags are
 * process-wide, so the worker threads see it too. Returns whether the relaxed build now validates.
 */
export function enableNodeRelaxedSimd(): boolean {
  if (relaxedSimdValidates()) return true;
  if (!/^v20\./.test(process.version)) return false; // another version may not know the flag, and would print that it does not
  setFlagsFromString('--experimental-wasm-relaxed-simd');
  return relaxedSimdValidates();
}

/**
 * WasmKernels on `threads` threads (the caller and threads − 1 worker threads; 1 = no workers), always
 * on a shared memory, so that the backend's weights, gradients and activations can live in it
 * (allocate()); the relaxed-SIMD build unless `simd` is 'plain' (or this Node cannot run it).
 */
export async function createNodeWasmKernels(threads: number = defaultThreadCount(), simd?: KernelSimd): Promise<WasmKernels> {
  if (simd !== 'plain') enableNodeRelaxedSimd();
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
    simd,
  );
}
