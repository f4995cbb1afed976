/**
 * `npx tsx bench/isolation.ts`: what running an environment file in isolation costs. One
 * environment file (a single-turn task with three reward functions, as a typical verifier) is
 * loaded and evaluated three ways with an instant scripted model, so only environment code and the
 * boundary are timed: in this process (no isolation, the baseline), and through
 * `loadIsolatedEnvironment` (the child process, with whatever runs environment code in it) at
 * concurrency 1 and 8. Then what compiling the file costs (a TypeScript version of it): type-check
 * and bundle in this process against the compile process with an empty environment that the CLI
 * uses (src/cli/env-compile-process.ts): the first call (cold, as one CLI command pays it; in this
 * process the TypeScript check is first here, so its row carries loading the compiler) and the median
 * of BENCH_COMPILE_RUNS calls after it.
 * It prints two tables and one JSON line. Not a test: nothing is asserted.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { evaluate, ScriptedClient, type Environment } from '../src/envs/index.ts';
import { loadIsolatedEnvironment } from '../src/cli/isolated-environment.ts';
import { bundleEnvironmentFile } from '../src/cli/compile-env-file.ts';
import { typecheckEnvironmentFile } from '../src/cli/typecheck-env.ts';
import { compileEnvironmentInChild } from '../src/cli/env-compile-process.ts';

const ROLLOUTS = Number(process.env.BENCH_ROLLOUTS ?? 200);
const COMPILE_RUNS = Number(process.env.BENCH_COMPILE_RUNS ?? 3);
const LIBRARY = fileURLToPath(new URL('../src/envs/index.ts', import.meta.url));

// A verifier-like environment: arithmetic questions, an exact-match reward, a format reward with a
// regular expression, and a length metric.
const ENV_SOURCE = (library: string) => `
import { SingleTurnEnv, Rubric } from '${library}';
const exact = (ctx) => (ctx.completion.at(-1)?.content.trim() === ctx.answer ? 1 : 0);
const format = (ctx) => (/^-?\\d+$/.test(ctx.completion.at(-1)?.content.trim() ?? '') ? 1 : 0);
const length = (ctx) => (ctx.completion.at(-1)?.content.length ?? 0);
export default function loadEnvironment() {
  const dataset = Array.from({ length: 64 }, (_, i) => ({ question: 'What is ' + i + ' + ' + (2 * i) + '?', answer: String(3 * i) }));
  return new SingleTurnEnv({ name: 'arithmetic', dataset, evalDataset: dataset, rubric: new Rubric({ funcs: [exact, format, length], weights: [1, 0.2, 0] }) });
}
`;

// The model answers correctly half the time, instantly.
const model = new ScriptedClient((messages) => {
  const numbers = /What is (\d+) \+ (\d+)/.exec(messages.at(-1)!.content);
  const sum = numbers ? Number(numbers[1]) + Number(numbers[2]) : 0;
  return String(sum % 2 === 0 ? sum : sum + 1);
});

interface Row {
  how: string;
  concurrency: number;
  loadMs: number;
  rollouts: number;
  msPerRollout: number;
  rolloutsPerSecond: number;
}

async function measure(how: string, load: () => Promise<Environment & { close?: () => void }>, concurrency: number): Promise<Row> {
  const loadStarted = performance.now();
  const env = await load();
  const loadMs = performance.now() - loadStarted;
  // Warm up (JIT, the engine's first rollouts), then time ROLLOUTS rollouts.
  await evaluate(env, model, { numTasks: 8, concurrency });
  const started = performance.now();
  const result = await evaluate(env, model, { numTasks: 64, rolloutsPerTask: Math.ceil(ROLLOUTS / 64), concurrency });
  const ms = performance.now() - started;
  env.close?.();
  const rollouts = result.records.length;
  if (result.records.some((record) => record.errors.length > 0)) throw new Error(`${how}: a rollout failed: ${JSON.stringify(result.records.find((record) => record.errors.length > 0)?.errors)}`);
  return { how, concurrency, loadMs: Math.round(loadMs), rollouts, msPerRollout: +(ms / rollouts).toFixed(3), rolloutsPerSecond: Math.round((rollouts / ms) * 1000) };
}

const dir = mkdtempSync(join(tmpdir(), 'tabrl-bench-isolation-'));
const isolatedFile = join(dir, 'env.mjs');
writeFileSync(isolatedFile, ENV_SOURCE('tabrl'));
const inProcessFile = join(dir, 'env-in-process.mjs');
writeFileSync(inProcessFile, ENV_SOURCE(pathToFileURL(LIBRARY).href));

const rows: Row[] = [];
for (const concurrency of [1, 8]) {
  rows.push(await measure('in this process (no isolation)', async () => ((await import(pathToFileURL(inProcessFile).href)) as { default: () => Environment }).default(), concurrency));
  rows.push(await measure('isolated (loadIsolatedEnvironment)', () => loadIsolatedEnvironment(isolatedFile, {}), concurrency));
}

/** The first call's milliseconds (cold: what one CLI command pays) and the median of COMPILE_RUNS calls after it (warm). */
async function compileMs(compile: () => Promise<unknown>): Promise<{ coldMs: number; ms: number }> {
  const first = performance.now();
  await compile();
  const coldMs = Math.round(performance.now() - first);
  const times: number[] = [];
  for (let run = 0; run < COMPILE_RUNS; run++) {
    const started = performance.now();
    await compile();
    times.push(performance.now() - started);
  }
  return { coldMs, ms: Math.round(times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!) };
}

// The same environment as a typed .ts file, as `tabrl eval ./env.ts` type-checks and bundles it.
const typedFile = join(dir, 'env.ts');
writeFileSync(typedFile, `// @ts-nocheck: the benchmark's environment, untyped on purpose\n${ENV_SOURCE('tabrl')}`);
const compileRows = [
  { how: 'bundle, in this process (before)', ...await compileMs(() => bundleEnvironmentFile(typedFile)) },
  { how: 'bundle, in the compile process (now)', ...await compileMs(() => compileEnvironmentInChild(typedFile)) },
  { how: 'type-check + bundle, in this process (before)', ...await compileMs(async () => [typecheckEnvironmentFile(typedFile), await bundleEnvironmentFile(typedFile)]) },
  { how: 'type-check + bundle, in the compile process (now)', ...await compileMs(() => compileEnvironmentInChild(typedFile, { typecheck: true })) },
];

console.log('| how | concurrency | load ms | rollouts | ms / rollout | rollouts / s |');
console.log('|---|---|---|---|---|---|');
for (const row of rows) console.log(`| ${row.how} | ${row.concurrency} | ${row.loadMs} | ${row.rollouts} | ${row.msPerRollout} | ${row.rolloutsPerSecond} |`);
const overhead = (concurrency: number) => {
  const base = rows.find((row) => row.concurrency === concurrency && row.how.startsWith('in this'))!;
  const isolated = rows.find((row) => row.concurrency === concurrency && row.how.startsWith('isolated'))!;
  return +(isolated.msPerRollout - base.msPerRollout).toFixed(3);
};
console.log(`\n| compiling the file | first call ms | median of next ${COMPILE_RUNS} ms |\n|---|---|---|`);
for (const row of compileRows) console.log(`| ${row.how} | ${row.coldMs} | ${row.ms} |`);
console.log(JSON.stringify({ bench: 'isolation', rollouts: ROLLOUTS, rows, compile: compileRows, overheadMsPerRollout: { concurrency1: overhead(1), concurrency8: overhead(8) }, node: process.version, loadavg: (await import('node:os')).loadavg().map((load) => +load.toFixed(2)) }));
