/**
 * The kernels' thread pool on 2 threads in Chromium (a Web Worker beside the page's main thread,
 * which spins where Node's caller waits): the checks of test/support/kernel-pool-cases.ts, which
 * test/unit/gpu/fast-cpu/kernel-pool.test.ts runs on Node worker threads. The worker loop is the
 * same text in both (KERNEL_WORKER_LOOP), so the browser has the same fixes.
 */
import { afterAll, expect, it } from 'vitest';
import { createBrowserWasmKernels } from '../../../src/gpu/fast-cpu/web-kernel-threads.ts';
import { KERNEL_POOL_CASES } from '../../support/kernel-pool-cases.ts';

const kernelsPromise = createBrowserWasmKernels(2).then(({ kernels }) => kernels);
afterAll(async () => (await kernelsPromise).dispose());

it('runs on 2 threads (the page is cross-origin isolated)', async () => {
  expect((await kernelsPromise).threadCount).toBe(2);
});

for (const poolCase of KERNEL_POOL_CASES) {
  it(poolCase.name, async () => {
    await poolCase.run(await kernelsPromise);
  });
}
