// The Python package's own unit tests (python/tests, stdlib unittest: WebSocket framing, the clients
// against a scripted server, the TRL class's tools), run with the system's python3 and nothing
// installed, so `npm test` covers them.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

const PYTHON_DIR = fileURLToPath(new URL('../../../python', import.meta.url));

test('python/tests pass under python3 with the standard library only', async () => {
  const { code, output } = await new Promise<{ code: number; output: string }>((resolve) => {
    // -E -s: no PYTHON* variables and no user site-packages, so nothing installed can lend a module the package lacks.
    execFile('python3', ['-E', '-s', '-m', 'unittest', 'discover', '-s', 'tests', '-v'], { cwd: PYTHON_DIR, env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' }, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, output: stdout + stderr });
    });
  });
  expect(output, output).toMatch(/\nOK\n?$/);
  expect(code).toBe(0);
  // The run found the suites (a discovery mistake would run 0 tests and still print OK).
  expect(Number(/Ran (\d+) tests?/.exec(output)?.[1])).toBeGreaterThanOrEqual(30);
});
