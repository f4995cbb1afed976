/**
 * Web Workers for the WASM kernels in a browser: starts threads − 1 classic blob workers running the
 * pool's worker loop (shared-kernel-threads.ts) on the kernels' shared WebAssembly.Memory. Shared
 * memory needs a cross-origin isolated page (COOP same-origin + COEP); without it the kernels run
 * on one thread and say why, instead of failing. It also names the backend for the person using it.
 * Node's worker threads are node-kernel-threads.ts.
 */
import type { WasmKernels } from './wasm-kernels.ts';
import { createPooledWasmKernels, KERNEL_WORKER_LOOP, type KernelWorkerData } from './shared-kernel-threads.ts';

/** Why the kernels run on one thread although more were asked for, when the page cannot share memory. */
export const NOT_ISOLATED_REASON = 'page not cross-origin isolated';

// The worker, as a classic script from a blob: no bundler or module loader involved.
const WORKER_SOURCE = `${KERNEL_WORKER_LOOP}
self.onmessage = (event) => runKernelWorker(event.data, (error) => self.postMessage(error === undefined ? 'ready' : { error }));
`;

/** The browser's kernels and what they run on. */
interface BrowserWasmKernels {
  kernels: WasmKernels;
  /** Why fewer threads run than were asked for (NOT_ISOLATED_REASON), or null. */
  singleThreadReason: string | null;
}

/** The number of threads the fast CPU backend uses by default in a browser: every logical core it reports. */
function defaultBrowserThreadCount(): number {
  return Math.max(1, globalThis.navigator?.hardwareConcurrency ?? 1);
}

/** Whether this page or worker may share memory with its workers (cross-origin isolated, SharedArrayBuffer present). */
export function canShareMemory(): boolean {
  return globalThis.crossOriginIsolated === true && typeof SharedArrayBuffer === 'function';
}

/**
 * WasmKernels on `threads` threads (the caller and threads − 1 Web Workers), or on one thread with
 * the reason when the page is not cross-origin isolated. On a page's main thread, where Atomics.wait
 * is not allowed, the caller spins while the workers finish.
 */
export async function createBrowserWasmKernels(threads: number = defaultBrowserThreadCount()): Promise<BrowserWasmKernels> {
  if (threads > 1 && !canShareMemory()) return { kernels: await createPooledWasmKernels(1, true, startWebWorkers), singleThreadReason: NOT_ISOLATED_REASON };
  const canBlock = typeof (globalThis as { WorkerGlobalScope?: unknown }).WorkerGlobalScope !== 'undefined';
  return { kernels: await createPooledWasmKernels(threads, canBlock, startWebWorkers, canShareMemory()), singleThreadReason: null };
}

/** Starts one blob worker per entry, resolving when each has instantiated the module; returns the function that ends them. */
async function startWebWorkers(workers: KernelWorkerData[]): Promise<() => void> {
  const url = URL.createObjectURL(new Blob([WORKER_SOURCE], { type: 'text/javascript' }));
  const started: Worker[] = [];
  const stop = () => started.forEach((worker) => worker.terminate());
  try {
    await Promise.all(
      workers.map((data) => {
        const worker = new Worker(url, { name: `tabrl-kernels-${data.index}` });
        started.push(worker);
        return new Promise<void>((resolve, reject) => {
          worker.onmessage = (event: MessageEvent<unknown>) => (event.data === 'ready' ? resolve() : reject(new Error(`a kernel worker could not start: ${(event.data as { error: string }).error}`)));
          worker.onerror = (event) => reject(new Error(`a kernel worker could not start: ${event.message || 'the worker failed to load'}`));
          worker.postMessage(data);
        });
      }),
    );
  } catch (error) {
    stop();
    throw error;
  } finally {
    URL.revokeObjectURL(url);
  }
  return stop;
}

/** How the app names the fast CPU backend: "CPU (WASM relaxed SIMD, 2 threads)" (or "WASM SIMD" without relaxed SIMD), or one thread and why. */
export function fastCpuLabel(browserKernels: BrowserWasmKernels): string {
  const threads = browserKernels.kernels.threadCount;
  const count = `${threads} thread${threads === 1 ? '' : 's'}`;
  return `CPU (${browserKernels.kernels.simdName}, ${count}${browserKernels.singleThreadReason ? `: ${browserKernels.singleThreadReason}` : ''})`;
}
