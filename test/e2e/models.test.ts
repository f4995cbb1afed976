/**
 * Real models in the tab, end to end in Chromium: huggingface.co is intercepted (context.route) and
 * serves a small model made in the test under SmolLM2-135M-Instruct's URLs, so the app's real
 * preset path runs — the progress bar, the load, an evaluation with the loaded model — then the
 * page reloads with huggingface.co unreachable and the model loads again from Cache Storage. A
 * missing file (404) shows a message naming it. Screenshots go to test-results/screenshots/.
 */
import { readFileSync } from 'node:fs';
import type { Browser, BrowserContext, Page, Route } from 'playwright';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { tinyHfModelFiles } from '../support/tiny-hf-model.ts';
import { launchBrowser, openPage, screenshot } from './browser.ts';

const appUrl = inject('appUrl');
const PRESET = 'smollm2-135m-instruct';
const REPO_URL = 'https://huggingface.co/HuggingFaceTB/SmolLM2-135M-Instruct/resolve/main/';
let browser: Browser;
let folder: Map<string, Uint8Array>;

beforeAll(async () => {
  browser = await launchBrowser();
  folder = await tinyHfModelFiles(readFileSync(new URL('../fixtures/tokenizers/smollm2-chat-template.jinja', import.meta.url), 'utf8'));
});

afterAll(async () => {
  await browser?.close();
});

/** Serves the small model under huggingface.co (with CORS, as the real CDN answers); `hold` delays model.safetensors until released. */
async function serveModel(context: BrowserContext, options: { without?: string; hold?: Promise<void> } = {}): Promise<string[]> {
  const requested: string[] = [];
  await context.route('https://huggingface.co/**', async (route: Route) => {
    const url = route.request().url();
    requested.push(url);
    const name = url.slice(url.lastIndexOf('/') + 1);
    const bytes = name === options.without ? undefined : folder.get(name);
    const headers = { 'access-control-allow-origin': '*', 'access-control-expose-headers': 'content-length' };
    if (!bytes) return route.fulfill({ status: 404, headers, body: 'Entry not found' });
    if (name === 'model.safetensors') await options.hold;
    await route.fulfill({ status: 200, headers: { ...headers, 'content-type': 'application/octet-stream' }, body: Buffer.from(bytes) });
  });
  return requested;
}

async function openInTabPolicy(page: Page): Promise<void> {
  await page.locator('.monaco-editor .view-lines').first().waitFor();
  await page.getByTestId('policy-in-tab').click();
  await page.getByTestId('model-picker').waitFor();
}

describe('real models in the tab', () => {
  test('a preset downloads with progress, loads, evaluates, and loads again offline from the cache', { timeout: 240_000 }, async () => {
    const { context, page, pageErrors } = await openPage(browser, appUrl, { inTabModel: 'tiny' });
    page.on('console', (message) => { if (message.type() === 'error') console.log(`page: ${message.text()}`); });
    let release = () => {};
    const hold = new Promise<void>((resolve) => { release = resolve; });
    const requested = await serveModel(context, { hold });
    await openInTabPolicy(page);
    await expect.poll(() => page.getByTestId('engine-status').textContent(), { timeout: 60_000 }).toMatch(/parameter model over bytes/);
    expect(await page.getByTestId(`model-detail-${PRESET}`).textContent()).toBe('download 272 MB');

    await page.getByTestId(`model-${PRESET}`).click();
    await page.getByTestId('model-progress').waitFor({ timeout: 30_000 });
    await expect.poll(() => requested.some((url) => url.endsWith('/model.safetensors')), { timeout: 30_000 }).toBe(true);
    await page.getByTestId('model-progress').scrollIntoViewIfNeeded();
    await screenshot(page, '40-model-downloading');
    release();
    await expect.poll(() => page.getByTestId('engine-status').textContent(), { timeout: 120_000 }).toMatch(/SmolLM2-135M-Instruct.*LoRA rank 16/);
    expect(requested.map((url) => url.slice(REPO_URL.length)).sort()).toEqual([...folder.keys()].sort());
    await expect.poll(() => page.getByTestId(`model-detail-${PRESET}`).textContent()).toBe('cached · 272 MB');
    expect(await page.getByTestId('model-progress').count()).toBe(0);
    await screenshot(page, '41-model-loaded');

    // One evaluation with the loaded model (its replies are random: the weights are).
    await page.getByTestId('setting-numTasks').fill('1');
    await page.getByTestId('setting-rolloutsPerTask').fill('1');
    await page.getByTestId('setting-maxTokens').fill('6');
    await page.getByTestId('evaluate').click();
    await page.getByTestId('summary').waitFor({ timeout: 120_000 });
    await expect.poll(() => page.getByTestId('summary').textContent()).toMatch(/1\s*rollouts? · 1 tasks?/);

    // Offline: huggingface.co now refuses every request; the model comes from Cache Storage.
    await context.unrouteAll({ behavior: 'wait' });
    const offline: string[] = [];
    await context.route('https://huggingface.co/**', (route) => {
      offline.push(route.request().url());
      return route.abort('internetdisconnected');
    });
    await page.reload();
    await openInTabPolicy(page);
    expect(await page.getByTestId(`model-${PRESET}`).getAttribute('aria-checked')).toBe('true');
    await expect.poll(() => page.getByTestId('engine-status').textContent(), { timeout: 120_000 }).toMatch(/SmolLM2-135M-Instruct/);
    expect(offline).toEqual([]);
    await screenshot(page, '42-model-from-cache');

    // Remove from cache: the preset offers a download again.
    await page.getByTestId(`model-uncache-${PRESET}`).click();
    await expect.poll(() => page.getByTestId(`model-detail-${PRESET}`).textContent()).toBe('download 272 MB');
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  test('a missing file (404) shows a message naming it, and the engine keeps tiny', { timeout: 180_000 }, async () => {
    const { context, page, pageErrors } = await openPage(browser, appUrl, { inTabModel: 'tiny' });
    await serveModel(context, { without: 'tokenizer.json' });
    await openInTabPolicy(page);
    await expect.poll(() => page.getByTestId('engine-status').textContent(), { timeout: 60_000 }).toMatch(/parameter model over bytes/);
    await page.getByTestId(`model-${PRESET}`).click();
    const alert = page.getByRole('alert').filter({ hasText: 'tokenizer.json' });
    await alert.waitFor({ timeout: 60_000 });
    expect(await alert.textContent()).toContain(`tokenizer.json was not found at ${REPO_URL}tokenizer.json (HTTP 404)`);
    await expect.poll(() => page.getByTestId('engine-status').textContent(), { timeout: 60_000 }).toMatch(/parameter model over bytes/);
    // The picker selects the model the engine kept, not the one that failed (a later action would load it again).
    expect(await page.getByTestId('model-tiny').getAttribute('aria-checked')).toBe('true');
    expect(await page.getByTestId(`model-${PRESET}`).getAttribute('aria-checked')).toBe('false');
    await screenshot(page, '43-model-404');
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  test('local files: missing ones are listed, a complete set loads without the network', { timeout: 180_000 }, async () => {
    const { context, page, pageErrors } = await openPage(browser, appUrl, { inTabModel: 'tiny' });
    const requested: string[] = [];
    await context.route('https://huggingface.co/**', (route) => { requested.push(route.request().url()); return route.abort(); });
    await openInTabPolicy(page);
    await expect.poll(() => page.getByTestId('engine-status').textContent(), { timeout: 60_000 }).toMatch(/parameter model over bytes/);
    const asInput = (names: string[]) => names.map((name) => ({ name, mimeType: 'application/octet-stream', buffer: Buffer.from(folder.get(name)!) }));
    await page.getByTestId('model-files-input').setInputFiles(asInput(['config.json', 'model.safetensors']));
    const alert = page.getByTestId('model-error');
    await alert.waitFor({ timeout: 60_000 });
    expect(await alert.textContent()).toMatch(/lack tokenizer\.json, tokenizer_config\.json/);
    await page.getByTestId('model-files-input').setInputFiles(asInput([...folder.keys()]));
    await expect.poll(() => page.getByTestId('engine-status').textContent(), { timeout: 120_000 }).toMatch(/local Llama.*LoRA rank 16/);
    expect(await page.getByTestId('model-local').getAttribute('aria-checked')).toBe('true');
    expect(await page.getByTestId('model-error').count()).toBe(0);
    expect(requested).toEqual([]);
    await screenshot(page, '44-model-local-files');
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  test('a run trained on tiny is never loaded into another model: evaluation leaves it alone, training says which model to choose', { timeout: 300_000 }, async () => {
    const { context, page, pageErrors } = await openPage(browser, appUrl, { inTabModel: 'tiny' });
    await serveModel(context);
    await openInTabPolicy(page);
    await expect.poll(() => page.getByTestId('engine-status').textContent(), { timeout: 60_000 }).toMatch(/parameter model over bytes/);
    await page.getByTestId('mode-warmup').click();
    for (const [testId, value] of Object.entries({ 'train-demonstrations': '4', 'train-sftSteps': '1', 'train-sftBatchSize': '2' })) await page.getByTestId(testId).fill(value);
    await page.getByTestId('start-training').click();
    await page.locator('[data-testid="training-done"], [data-testid="training-failure"]').first().waitFor({ timeout: 150_000 });
    expect(await page.getByTestId('training-done').textContent()).toMatch(/Warm-up finished/);

    await page.getByTestId(`model-${PRESET}`).click();
    await expect.poll(() => page.getByTestId('engine-status').textContent(), { timeout: 120_000 }).toMatch(/SmolLM2-135M-Instruct/);
    await page.getByTestId('mode-evaluate').click();
    for (const [testId, value] of Object.entries({ 'setting-numTasks': '1', 'setting-rolloutsPerTask': '1', 'setting-maxTokens': '4' })) await page.getByTestId(testId).fill(value);
    await page.getByTestId('evaluate').click();
    await page.getByTestId('summary').waitFor({ timeout: 120_000 });

    await page.getByTestId('mode-warmup').click();
    await page.getByTestId('start-training').click();
    const failure = page.getByTestId('training-failure');
    await failure.waitFor({ timeout: 60_000 });
    expect(await failure.textContent()).toMatch(/The open run was trained on tiny, but the in-tab model is now smollm2-135m-instruct: its weights cannot be loaded into another model\. Choose tiny/);
    await screenshot(page, '45-run-of-another-model');
    expect(pageErrors).toEqual([]);
    await context.close();
  });
});
