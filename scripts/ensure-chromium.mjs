#!/usr/bin/env node
// Makes sure a Chromium with WebGPU is there before the browser tests run: CHROMIUM_PATH or
// /usr/bin/chromium; otherwise, as root with apt-get, installs Debian's chromium; otherwise stops
// with the one-line fix. Plain JS so that it runs before anything is compiled.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const candidates = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'];
const found = candidates.find((path) => path && existsSync(path));
const hasVulkanLoader = () => spawnSync('sh', ['-c', 'ldconfig -p | grep -q libvulkan.so.1']).status === 0;

if (found && hasVulkanLoader()) process.exit(0);

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const hasApt = spawnSync('sh', ['-c', 'command -v apt-get']).status === 0;
if (!isRoot || !hasApt) {
  console.error(
    'tabrl: no Chromium with WebGPU found (set CHROMIUM_PATH, or run: sudo apt-get install -y chromium libvulkan1)',
  );
  process.exit(1);
}

console.error('tabrl: installing Debian chromium and libvulkan1 for the browser tests (once, ~1 min)...');
const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
try {
  execFileSync('apt-get', ['update'], { stdio: 'inherit', env });
  execFileSync('apt-get', ['install', '-y', '--no-install-recommends', 'chromium', 'libvulkan1'], { stdio: 'inherit', env });
} catch {
  console.error('tabrl: installing chromium failed; run: apt-get update && apt-get install -y chromium libvulkan1');
  process.exit(1);
}
