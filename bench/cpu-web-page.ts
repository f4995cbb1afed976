/**
 * The page of `npm run bench:cpu-web`: starts bench/cpu-web.worker.ts (a module worker, where the
 * app's engine runs its kernels), relays its log to #log and its answer to `window.benchResult`
 * (or `window.benchError`). Not a test.
 */
const log = (line: string): void => {
  document.getElementById('log')!.textContent += `\n${line}`;
};
const target = window as unknown as { benchResult?: unknown; benchError?: string };
log(`crossOriginIsolated ${crossOriginIsolated}, hardwareConcurrency ${navigator.hardwareConcurrency}`);
const worker = new Worker(new URL('./cpu-web.worker.ts', import.meta.url), { type: 'module' });
worker.onmessage = (event: MessageEvent<{ log?: string; result?: unknown; error?: string }>) => {
  if (event.data.log !== undefined) log(event.data.log);
  if (event.data.error !== undefined) target.benchError = event.data.error;
  if (event.data.result !== undefined) target.benchResult = event.data.result;
};
worker.onerror = (event) => {
  target.benchError = `the benchmark worker failed: ${event.message}`;
};
