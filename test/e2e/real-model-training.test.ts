/**
 * A real-format model trained through the page, end to end in Chromium: a small Llama folder made in
 * the test with a 512-token byte-level BPE vocabulary whose tokens past the byte range are
 * multi-byte UTF-8 (accented letters, CJK, emoji), picked with "Local files…". Two GRPO steps
 * through the Training tab (with the Environment tab in front for a while), the rollouts' tokens as
 * the engine decoded them, the Chat tab's base and trained answers, and the LoRA adapter's export.
 * A stored run that cannot be drawn shows an error in the Runs tab only, and the app stays up.
 */
import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { unzipSync } from 'fflate';
import { tinyHfModelFiles, wideTokenTexts } from '../support/tiny-hf-model.ts';
import { fillFields, jobOutcome, launchBrowser, openPage, screenshot, waitForEditor } from './browser.ts';

const appUrl = inject('appUrl');
let browser: Browser;
let folder: Map<string, Uint8Array>;

beforeAll(async () => {
  browser = await launchBrowser();
  folder = await tinyHfModelFiles(readFileSync(new URL('../fixtures/tokenizers/smollm2-chat-template.jinja', import.meta.url), 'utf8'), 11, { wide: true });
});

afterAll(async () => {
  await browser?.close();
});

/** Picks the wide model's files with "Local files…" and waits until the engine holds it. */
async function loadWideModel(page: Page): Promise<void> {
  await page.getByTestId('policy-in-tab').click();
  await expect.poll(() => page.getByTestId('engine-status').textContent(), { timeout: 60_000 }).toMatch(/parameter model over bytes/);
  const files = [...folder].map(([name, bytes]) => ({ name, mimeType: 'application/octet-stream', buffer: Buffer.from(bytes) }));
  await page.getByTestId('model-files-input').setInputFiles(files);
  await expect.poll(() => page.getByTestId('engine-status').textContent(), { timeout: 120_000 }).toMatch(/local Llama.*LoRA rank 16/);
}

describe('a real-format model with a wide, multi-byte vocabulary', () => {
  test('trains through the Training tab with its tokens shown as text, chats, and exports its adapter', { timeout: 420_000 }, async () => {
    const { context, page, pageErrors } = await openPage(browser, appUrl);
    await context.route('https://huggingface.co/**', (route) => route.abort());
    page.on('console', (message) => { if (message.type() === 'error') console.log(`page: ${message.text()}`); });
    await waitForEditor(page);
    await loadWideModel(page);

    await page.getByTestId('mode-train').click();
    await fillFields(page, { 'train-grpoSteps': '2', 'train-tasksPerStep': '2', 'train-groupSize': '2', 'train-maxTokens': '8' });
    await page.getByTestId('start-training').click();
    await page.getByTestId('training-view').waitFor();
    // The crash came with either tab in front: look at the editor while the first step runs.
    await page.getByTestId('tab-editor').click();
    await expect.poll(() => page.getByTestId('training-progress').textContent(), { timeout: 60_000 }).toMatch(/GRPO/);
    await page.getByTestId('tab-training').click();
    expect(await jobOutcome(page, 300_000)).toMatch(/Training finished/);
    await expect.poll(() => page.getByTestId('run-grpo-steps').textContent()).toBe('2 GRPO steps');
    expect(await page.getByTestId('training-rollout').count()).toBe(4);

    // Every sampled token is shown as the text it adds; a random 512-token model samples ids past 264, most of them multi-byte words.
    const titles = await page.getByTestId('token').evaluateAll((nodes) => nodes.map((node) => node.getAttribute('title') ?? ''));
    const ids = titles.map((title) => Number(/^token (\d+):/.exec(title)?.[1] ?? -1));
    expect(ids.length).toBeGreaterThan(8);
    expect(ids.every((id) => id >= 0 && id < 512)).toBe(true);
    expect(ids.some((id) => id > 264)).toBe(true);
    const shown = (await page.getByTestId('training-rollouts').locator('.tokens').allTextContents()).join('');
    const wideShown = wideTokenTexts().filter((text) => text.trim() !== '' && shown.includes(text.trim()));
    expect(wideShown.length).toBeGreaterThan(0);
    expect(await page.getByTestId('error-boundary').count()).toBe(0);
    await page.getByTestId('training-rollouts').scrollIntoViewIfNeeded();
    await screenshot(page, 'real-model-rollouts');

    // Chat: the base (adapters off) and the trained model answer side by side.
    await page.getByTestId('tab-chat').click();
    await expect.poll(() => page.getByTestId('chat-column-trained').locator('h3').textContent()).toMatch(/^trained — reverse-text · 0 SFT \+ 2 GRPO steps/);
    await fillFields(page, { 'chat-max-tokens': '6' });
    await page.getByTestId('chat-input').fill('日本 é →');
    await page.getByTestId('chat-send').click();
    const answer = (column: string) => page.getByTestId(`chat-answer-${column}`).first();
    await expect.poll(async () => [await answer('base').getAttribute('data-status'), await answer('trained').getAttribute('data-status')], { timeout: 120_000 }).toEqual(['done', 'done']);
    await screenshot(page, 'real-model-chat');

    // Export: the LoRA adapter as a PEFT zip.
    const [file] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-model').click()]);
    const entries = unzipSync(new Uint8Array(readFileSync((await file.path())!)));
    expect(Object.keys(entries).sort()).toEqual(['adapter_config.json', 'adapter_model.safetensors']);
    expect(JSON.parse(new TextDecoder().decode(entries['adapter_config.json']))).toMatchObject({ peft_type: 'LORA', r: 16 });
    expect(await page.getByTestId('error-boundary').count()).toBe(0);
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  test('a stored run that cannot be drawn shows what failed in its tab, and the rest of the app keeps working', { timeout: 120_000 }, async () => {
    const { context, page, pageErrors } = await openPage(browser, appUrl);
    await waitForEditor(page);
    // A damaged record in IndexedDB (its metrics are not lists), as an older or broken build could leave.
    await page.evaluate(async () => {
      const db = await new Promise<IDBDatabase>((resolve, reject) => {
        const request = indexedDB.open('tabrl-runs');
        request.onsuccess = () => resolve(request.result);
        request.onerror = () => reject(request.error);
      });
      const now = Date.now();
      await new Promise<void>((resolve, reject) => {
        const transaction = db.transaction('runs', 'readwrite');
        transaction.objectStore('runs').put({ id: 'run-broken', environment: 'reverse-text', args: {}, settings: {}, seed: 0, createdAt: now, updatedAt: now, sft: 3, grpo: 'broken', evaluations: null, checkpointStep: null });
        transaction.oncomplete = () => resolve();
        transaction.onerror = () => reject(transaction.error);
      });
      db.close();
    });
    await page.reload();
    await waitForEditor(page);
    await page.getByTestId('tab-runs').click();
    const failed = page.getByTestId('error-boundary');
    await failed.waitFor({ timeout: 20_000 });
    expect(await failed.textContent()).toMatch(/The Runs tab could not be shown: .+/);
    await screenshot(page, 'error-boundary-runs');
    // The other tabs and the side pane still work: an evaluation with the expert runs to its summary.
    await page.getByTestId('tab-editor').click();
    await fillFields(page, { 'setting-numTasks': '1', 'setting-rolloutsPerTask': '1' });
    await page.getByTestId('evaluate').click();
    await page.getByTestId('summary').waitFor({ timeout: 60_000 });
    expect(await page.getByTestId('error-boundary').count()).toBe(0);
    // React reports the caught render error; nothing reached the page as an uncaught error.
    expect(pageErrors).toEqual([]);
    await context.close();
  });
});
