#!/usr/bin/env node
// Runs the commands of the named npm scripts (each split at its top-level `&&`) side by side, as many
// at a time as the machine has cores, so `npm test`'s type-check and lint take the time of their
// longest lane instead of the sum (on 2 cores: the three `tsc` projects, eslint and the Prettier check,
// about 55 s one after another). Each command's output is printed whole when it ends, so lanes do
// not interleave; the exit code is 1 when any command failed, after all of them have run, so one
// run reports every failure. It runs nothing but the scripts named, exactly as `npm run` would.
// Usage: node scripts/run-checks.mjs typecheck lint
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { delimiter } from 'node:path';
import { fileURLToPath } from 'node:url';

const scriptNames = process.argv.slice(2);
if (scriptNames.length === 0) {
  console.error('usage: node scripts/run-checks.mjs SCRIPT... (names of npm scripts in package.json, e.g. typecheck lint)');
  process.exit(2);
}
const scripts = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).scripts ?? {};
const missing = scriptNames.filter((name) => typeof scripts[name] !== 'string');
if (missing.length > 0) {
  console.error(`run-checks: no npm script named ${missing.map((name) => `"${name}"`).join(', ')} in package.json; name scripts it has (${Object.keys(scripts).join(', ')})`);
  process.exit(2);
}
// "tsc -p a.json && tsc -p b.json" → two commands; a script with || or ; is kept whole, since splitting it would change its meaning.
const commands = scriptNames.flatMap((name) => (/\|\||;/.test(scripts[name]) ? [scripts[name]] : scripts[name].split('&&').map((part) => part.trim())));

const ROOT = fileURLToPath(new URL('..', import.meta.url));
// As `npm run` does: the project's own tools (tsc, eslint) first on the PATH.
const env = { ...process.env, PATH: `${ROOT}node_modules/.bin${delimiter}${process.env.PATH ?? ''}` };

/** Runs one command in a shell from the repository root; resolves with whether it passed and what it printed. */
function run(command) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(command, { shell: true, cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', (error) => resolve({ command, passed: false, output: `${output}${error.message}\n`, seconds: (Date.now() - started) / 1000 }));
    child.on('close', (code, signal) => resolve({ command, passed: code === 0, output: signal ? `${output}killed by ${signal}\n` : output, seconds: (Date.now() - started) / 1000 }));
  });
}

const lanes = Math.max(1, Math.min(availableParallelism(), commands.length));
const queue = [...commands];
let failed = 0;
await Promise.all(
  Array.from({ length: lanes }, async () => {
    for (let command = queue.shift(); command !== undefined; command = queue.shift()) {
      const result = await run(command);
      if (!result.passed) failed += 1;
      process.stdout.write(result.output);
      console.error(`${result.passed ? 'passed' : 'FAILED'}: ${result.command} (${result.seconds.toFixed(1)} s)`);
    }
  }),
);
if (failed > 0) console.error(`run-checks: ${failed} of ${commands.length} commands failed (their output is above)`);
process.exit(failed > 0 ? 1 : 0);
