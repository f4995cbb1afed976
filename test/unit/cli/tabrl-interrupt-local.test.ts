// Ctrl-C while an in-process model (local:) decodes on the CPU: decoding never left the microtask
// queue, so the signal handler never ran and `tabrl eval` went on to the last rollout. Now it stops,
// keeps the finished rollouts and says how to resume (exit 130).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { TABRL_BIN } from '../../support/tabrl-cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'tabrl-interrupt-local-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('tabrl eval --model local:tiny stops on Ctrl-C with the finished rollouts kept', { timeout: 60_000 }, async () => {
  const out = join(dir, 'eval');
  const results = join(out, 'results.jsonl');
  const child = spawn(process.execPath, [TABRL_BIN, 'eval', 'reverse-text', '--model', 'local:tiny', '-n', '100', '-r', '30', '--max-tokens', '64', '-c', '1', '--out', out], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
  // Interrupt once the first rollouts are written (the handler is installed by then).
  const poll = setInterval(() => {
    if (existsSync(results) && readFileSync(results, 'utf8').length > 0) {
      clearInterval(poll);
      child.kill('SIGINT');
    }
  }, 100);
  const timer = setTimeout(() => child.kill('SIGKILL'), 45_000);
  const code = await closed;
  clearInterval(poll);
  clearTimeout(timer);
  expect(stderr).toContain(`interrupted: the results cover the rollouts that finished; continue with tabrl eval --resume ${out}`);
  expect(code).toBe(130);
  const lines = readFileSync(results, 'utf8').trim().split('\n');
  expect(lines.length).toBeGreaterThan(0);
  expect(lines.length).toBeLessThan(3000);
  expect(JSON.parse(readFileSync(join(out, 'metadata.json'), 'utf8'))).toMatchObject({ status: 'interrupted', stopped_by: 'SIGINT' });
});
