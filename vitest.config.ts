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
          // Two files at a time even on 2 cores (vitest's default is cores - 1): most of a unit file's time
          // is spent waiting on the \`tabrl\` processes it starts, not in its own worker.
          maxWorkers: 2,
          // Its own group (run after the others), since projects that share a group share one worker count.
          sequence: { groupOrder: 1 },
        },
      },
      {
        test: {
          name: 'gpu-node',
          environment: 'node',
          include: ['test/gpu-node/**/*.test.ts'],
          pool: 'forks',
          testTimeout: 120_000,
        },
      },
      {
        // Cross-origin isolated like the app, so the fast CPU kernels' Web Workers can share memory.
        server: { headers: { ...CROSS_ORIGIN_ISOLATION_HEADERS } },
        test: {
          name: 'browser',
          include: ['test/browser/**/*.test.ts'],
          testTimeout: 120_000,
          browser: {
            enabled: true,
            headless: true,
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
        },
      },
    ],
  },
});
