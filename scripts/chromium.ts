/**
 * Where Debian's Chromium lives and the flags that give it WebGPU on a GPU-less machine
 * (docs/engine-webgpu.md, "WebGPU without a GPU"). Shared by the test config, the e2e tests and the benchmarks.
 */
import { existsSync } from 'node:fs';

/** Flags for headless Chromium: WebGPU on, and no background traffic to hosts this machine cannot reach. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--enable-unsafe-webgpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Returns the Chromium executable to use (CHROMIUM_PATH, then Debian's), or undefined when none exists. */
export function findChromium(): string | undefined {
  const candidates = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'];
  return candidates.find((path): path is string => !!path && existsSync(path));
}
