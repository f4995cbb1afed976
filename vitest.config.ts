/**
 * Test projects: `unit` runs in Node; `gpu-node` runs WebGPU tests in Node through Dawn (one forked
 * process per file, since a native addon does not belong in worker threads); `browser` runs in real
 * Chromium with WebGPU on whatever adapter the machine has (SwiftShader on a GPU-less machine);
 * `e2e` builds the playground, serves it and drives it with Playwright (test/e2e).
 */
import { defineConfig } from 'vitest/config';
import { playwright } from '@vitest/browser-playwright';
import { CHROMIUM_ARGS, findChromium } from './scripts/chromium.ts';
import { CROSS_ORIGIN_ISOLATION_HEADERS } from './scripts/cross-origin-isolation.ts';

/**
 * Node test files run two at a time, all projects in one queue (one vitest group), even on 2 cores
 * (vitest's default there is one), while the browser project runs its files one at a time beside
 * them. Before, e2e and gpu-node ran one file at a time and unit in a group of its own after them,
 * so once the browser files were done (after 140 s of a 3443 s run of main on a loaded machine), e2e
 * and gpu-node (2184 s of that run) went one file at a time on a 2-core machine.
 */
const NODE_FILES_AT_ONCE = 2;

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          environment: 'node',
          include: ['test/unit/**/*.test.ts'],
          // Many unit tests run the real \`tabrl\` binary (a process start and a TypeScript load each);
          // a limit that leaves room for a loaded 2-core machine, not a speed assertion.
          testTimeout: 90_000,
          maxWorkers: NODE_FILES_AT_ONCE,
        },
      },
      {
        test: {
          name: 'gpu-node',
          environment: 'node',
          include: ['test/gpu-node/**/*.test.ts'],
          pool: 'forks',
          testTimeout: 120_000,
          maxWorkers: NODE_FILES_AT_ONCE,
        },
      },
      {
        // Cross-origin isolated like the app, so the fast CPU kernels' Web Workers can share memory.
        server: { headers: { ...CROSS_ORIGIN_ISOLATION_HEADERS } },
        test: {
          name: 'browser',
          include: ['test/browser/**/*.test.ts'],
          testTimeout: 120_000,
          // The group's worker count (vitest refuses a run where projects of one group differ in it); the
          // browser files still run one at a time, in one Chromium, beside the Node files.
          maxWorkers: NODE_FILES_AT_ONCE,
          browser: {
            enabled: true,
            headless: true,
            fileParallelism: false,
            screenshotFailures: false,
            provider: playwright({
              launchOptions: { executablePath: findChromium() ?? '/usr/bin/chromium', args: CHROMIUM_ARGS },
            }),
            instances: [{ browser: 'chromium' }],
          },
        },
      },
      {
        test: {
          name: 'e2e',
          environment: 'node',
          include: ['test/e2e/*.test.ts'],
          globalSetup: ['test/e2e/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 180_000,
          maxWorkers: NODE_FILES_AT_ONCE,
        },
      },
    ],
  },
});
