/**
 * The kernels' thread pool on 2 Node worker threads: the checks of test/support/kernel-pool-cases.ts
 * (a late wake-up runs nothing twice, the generation wraps past −1, a worker's trap is the caller's
 * error, a caller's own failure waits for the worker), which test/browser/fast-cpu/kernel-pool.test.ts
 * runs in Chromium; and the interleaving that stalled two-thread training runs on a loaded machine,
 * forced by delays in a process of its own (test/support/kernel-pool-late-notify.ts): the caller's
 * notify held back until the worker has served the call on its own and waits again. A pool that
 * gets it wrong blocks that process for good, so it is killed after a limit and the test fails.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { createNodeWasmKernels } from '../../../../src/gpu/fast-cpu/node-kernel-threads.ts';
import { KERNEL_POOL_CASES } from '../../../support/kernel-pool-cases.ts';

const kernelsPromise = createNodeWasmKernels(2);
afterAll(async () => (await kernelsPromise).dispose());

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const LATE_NOTIFY_SCENARIO = 'test/support/kernel-pool-late-notify.ts';
const LATE_NOTIFY_TIMEOUT_MS = 60_000; // the scenario takes a few seconds; a pool that hangs is killed here

for (const poolCase of KERNEL_POOL_CASES) {
  it(poolCase.name, async () => {
    await poolCase.run(await kernelsPromise);
  });
}

it(
  'the caller notified after the worker served the call on its own (forced by delays): the calls complete, each share added once',
  async () => {
    const { code, stdout, stderr } = await new Promise<{ code: number | string | null; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, ['--import', 'tsx', LATE_NOTIFY_SCENARIO], { cwd: ROOT, timeout: LATE_NOTIFY_TIMEOUT_MS }, (error, stdout, stderr) =>
        resolve({ code: error ? (error.killed ? 'killed: the pool hung' : (error.code ?? 1)) : 0, stdout, stderr }),
      );
    });
    expect(code, stderr).toBe(0);
    const result = JSON.parse(stdout.trim()) as { calls: number; lateNotifies: number; mismatches: number };
    expect(result.lateNotifies).toBeGreaterThan(0); // the interleaving did happen
    expect(result.mismatches).toBe(0);
  },
  LATE_NOTIFY_TIMEOUT_MS + 30_000,
);
