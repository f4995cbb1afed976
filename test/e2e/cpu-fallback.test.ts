/**
 * The app as `npm start` serves it (vite preview with vite.config.ts) is cross-origin isolated, and
 * in a Chromium without WebGPU (`--disable-features=WebGPU`) the in-tab model says why and runs on
 * the fast CPU backend (WASM SIMD kernels on Web Workers sharing memory), which the policy card
 * names: a warm-up and a GRPO step train there. `?engine=cpu-reference` still reaches the reference
 * backend. Screenshots 15-no-webgpu and 16-cpu-training go to test-results/screenshots/.
 */
import { chromium, type Browser, type Page } from 'playwright';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { CHROMIUM_ARGS, findChromium } from '../../scripts/chromium.ts';
import { fillFields, jobOutcome, openPage, screenshot, waitForEditor } from './browser.ts';

const appUrl = inject('appUrl');
let noGpu: Browser;

beforeAll(async () => {
  noGpu = await chromium.launch({ executablePath: findChromium()!, args: [...CHROMIUM_ARGS.filter((arg) => arg !== '--enable-unsafe-webgpu'), '--disable-features=WebGPU'] });
});

afterAll(async () => {
  await noGpu?.close();
});

/** The label the fast CPU backend should show in this page: as many threads as the browser reports cores, on the relaxed-SIMD build (Chromium ships it). */
async function expectedFastLabel(page: Page): Promise<string> {
  const threads = await page.evaluate(() => navigator.hardwareConcurrency);
  return `CPU (WASM relaxed SIMD, ${threads} thread${threads === 1 ? '' : 's'})`;
}

describe('without WebGPU', () => {
  test('the served app is cross-origin isolated, on every path the sandbox frame needs', async () => {
    for (const path of ['', 'sandbox/frame.html']) {
      const response = await fetch(`${appUrl}${path}`);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('cross-origin-opener-policy'), path).toBe('same-origin');
      expect(response.headers.get('cross-origin-embedder-policy'), path).toBe('require-corp');
    }
    const { context, page } = await openPage(noGpu, appUrl);
    expect(await page.evaluate(() => crossOriginIsolated)).toBe(true);
    await context.close();
  });

  test('the in-tab model says what happened, runs on the fast CPU backend and names it', { timeout: 120_000 }, async () => {
    const { context, page, pageErrors } = await openPage(noGpu, appUrl, { inTabModel: 'tiny' });
    await waitForEditor(page);
    await page.getByTestId('policy-in-tab').click();
    await expect.poll(() => page.getByTestId('engine-status').textContent(), { timeout: 60_000 }).toMatch(/parameter model over bytes/);
    expect(await page.getByTestId('engine-device').textContent()).toBe(await expectedFastLabel(page));
    expect(await page.getByTestId('engine-fallback').textContent()).toMatch(/(no WebGPU|no GPU adapter).*runs on the CPU.*Real models need WebGPU: a recent Chrome or Edge/);
    // An evaluation through the engine worker (and the sandbox frame under COEP).
    await fillFields(page, { 'setting-numTasks': '2', 'setting-rolloutsPerTask': '1', 'setting-maxTokens': '8' });
    await page.getByTestId('evaluate').click();
    await page.getByTestId('summary').waitFor({ timeout: 60_000 });
    expect(await page.getByTestId('error-count').textContent()).toMatch(/^0 with errors/);
    await page.getByTestId('engine-status').scrollIntoViewIfNeeded();
    await screenshot(page, '15-no-webgpu');
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  test('a warm-up and a GRPO step train on the fast CPU backend', { timeout: 180_000 }, async () => {
    const { context, page, pageErrors } = await openPage(noGpu, appUrl, { inTabModel: 'tiny' });
    await waitForEditor(page);
    await page.getByTestId('policy-in-tab').click();
    await expect.poll(() => page.getByTestId('engine-status').textContent(), { timeout: 60_000 }).toMatch(/parameter model over bytes/);
    await page.getByTestId('mode-warmup').click();
    await fillFields(page, { 'train-demonstrations': '4', 'train-sftSteps': '2', 'train-sftBatchSize': '2' });
    await page.getByTestId('start-training').click();
    expect(await jobOutcome(page, 90_000)).toMatch(/Warm-up finished\. 4 demonstrations kept/);
    await expect.poll(() => page.getByTestId('run-sft-steps').textContent()).toBe('2 SFT steps');

    await page.getByTestId('mode-train').click();
    await fillFields(page, { 'train-grpoSteps': '1', 'train-tasksPerStep': '2', 'train-groupSize': '2', 'train-maxTokens': '8' });
    await page.getByTestId('start-training').click();
    expect(await jobOutcome(page, 90_000)).toMatch(/Training finished/);
    await expect.poll(() => page.getByTestId('run-grpo-steps').textContent()).toBe('1 GRPO step');
    expect(await page.getByTestId('engine-device').textContent()).toBe(await expectedFastLabel(page));
    await page.getByTestId('engine-status').scrollIntoViewIfNeeded();
    await screenshot(page, '16-cpu-training');
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  test('?engine=cpu-reference runs the reference backend, the oracle, and names it', { timeout: 60_000 }, async () => {
    const { context, page } = await openPage(noGpu, `${appUrl}?engine=cpu-reference`, { inTabModel: 'tiny' });
    await waitForEditor(page);
    await page.getByTestId('policy-in-tab').click();
    await expect.poll(() => page.getByTestId('engine-status').textContent(), { timeout: 60_000 }).toMatch(/parameter model over bytes/);
    expect(await page.getByTestId('engine-device').textContent()).toBe('CPU (reference TypeScript, 1 thread)');
    await context.close();
  });
});
