// The Web APIs the QuickJS engine lacks, as environment code and the library use them, run in the
// engine itself: structuredClone keeps Maps, Sets, Dates, typed arrays and cycles and refuses
// functions; AbortController fires its listeners once; timers fire through the host's clock in the
// order the host calls them; console lines reach the host.
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { newQuickJSWASMModuleFromVariant, type QuickJSContext } from 'quickjs-emscripten-core';
import variant from '@jitl/quickjs-singlefile-cjs-release-sync';
import { beforeAll, expect, test } from 'vitest';

const SHIMS = fileURLToPath(new URL('../../../src/cli/quickjs-shims.ts', import.meta.url));

let vm: QuickJSContext;
const timers: [number, number][] = [];
const lines: string[] = [];

/** Runs `code` in the engine and returns its value as JSON data. */
function run(code: string): unknown {
  const result = vm.evalCode(code);
  if (result.error) {
    const error = vm.dump(result.error) as unknown;
    result.error.dispose();
    throw new Error(JSON.stringify(error));
  }
  const value = vm.dump(result.value) as unknown;
  result.value.dispose();
  return value;
}

beforeAll(async () => {
  // The shims as one script that installs them with the host functions the test lends.
  const entry = `import { installShims } from ${JSON.stringify(SHIMS)}; globalThis.fireTimer = installShims(globalThis.__host);`;
  const bundle = await build({ stdin: { contents: entry, resolveDir: '.', loader: 'ts' }, bundle: true, write: false, format: 'iife', target: 'es2022', logLevel: 'silent' });
  const QuickJS = await newQuickJSWASMModuleFromVariant(variant);
  vm = QuickJS.newRuntime().newContext();
  const host = vm.newObject();
  const setTimer = vm.newFunction('setTimer', (id, ms) => void timers.push([vm.getNumber(id), vm.getNumber(ms)]));
  const clearTimer = vm.newFunction('clearTimer', (id) => void timers.splice(timers.findIndex(([timer]) => timer === vm.getNumber(id)), 1));
  const log = vm.newFunction('log', (text) => void lines.push(vm.getString(text)));
  for (const [name, fn] of [['setTimer', setTimer], ['clearTimer', clearTimer], ['log', log]] as const) {
    vm.setProp(host, name, fn);
    fn.dispose();
  }
  vm.setProp(vm.global, '__host', host);
  host.dispose();
  run(bundle.outputFiles[0]!.text);
});

test('structuredClone keeps the data a rollout holds, shared and cyclic references included, and refuses functions', () => {
  expect(run(`
    const shared = { word: 'crane' };
    const original = { seen: new Set(['a', 'b']), counts: new Map([['a', 1]]), at: new Date(5), pattern: /x+/g, bytes: new Uint8Array([1, 2, 3]), pair: [shared, shared] };
    original.self = original;
    const copy = structuredClone(original);
    [copy !== original, copy.seen instanceof Set && copy.seen.has('b'), copy.counts.get('a'), copy.at.getTime(), copy.pattern.flags,
     Array.from(copy.bytes), copy.pair[0] === copy.pair[1], copy.pair[0] !== shared, copy.self === copy]
  `)).toEqual([true, true, 1, 5, 'g', [1, 2, 3], true, true, true]);
  expect(run(`(() => { try { structuredClone({ f() {} }); return 'cloned'; } catch (error) { return error.name; } })()`)).toBe('DataCloneError');
});

test('AbortController fires onabort and its listeners once, keeps the reason, and throwIfAborted throws it', () => {
  expect(run(`
    const controller = new AbortController();
    const calls = [];
    controller.signal.onabort = () => calls.push('onabort');
    controller.signal.addEventListener('abort', () => calls.push('listener'), { once: true });
    const removed = () => calls.push('removed');
    controller.signal.addEventListener('abort', removed);
    controller.signal.removeEventListener('abort', removed);
    controller.abort('stop');
    controller.abort('again');
    let thrown;
    try { controller.signal.throwIfAborted(); } catch (reason) { thrown = reason; }
    [calls, controller.signal.aborted, controller.signal.reason, thrown, AbortSignal.abort().aborted]
  `)).toEqual([['onabort', 'listener'], true, 'stop', 'stop', true]);
});

test('timers go through the host: setTimeout fires once, setInterval again until cleared, clearTimeout cancels', () => {
  timers.length = 0;
  run(`globalThis.fired = []; setTimeout((x) => fired.push('once ' + x), 20, 'a'); globalThis.every = setInterval(() => fired.push('every'), 5); globalThis.never = setTimeout(() => fired.push('never'), 1); clearTimeout(never);`);
  expect(timers.map(([, ms]) => ms).sort()).toEqual([20, 5]);
  const [once, every] = [...timers].sort(([, a], [, b]) => b - a).map(([id]) => id);
  run(`fireTimer(${every}); fireTimer(${every}); fireTimer(${once}); fireTimer(${once}); clearInterval(every); fireTimer(${every});`);
  expect(run('fired')).toEqual(['every', 'every', 'once a']);
});

test('console lines reach the host, errors with their name and message', () => {
  lines.length = 0;
  run(`console.log('reward', 1, { ok: true }); console.error(new TypeError('bad'));`);
  expect(lines[0]).toBe('reward 1 {"ok":true}');
  expect(lines[1]).toMatch(/^TypeError: bad/);
});
