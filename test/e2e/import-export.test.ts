/**
 * Import and export in the Files card, end to end in real Chromium: the environment file goes out as
 * `<name>.ts` and comes back through the review dialog; the evaluation's results download as the
 * lines `tabrl eval` writes; warm-up data downloads as JSONL of chats, and an imported file with a bad
 * line is refused naming it; the tiny model's weights download as a zip (config.json +
 * model.safetensors) that a fresh page imports, after which the chat's trained column gives the same
 * greedy answer, and a warm-up there trains on from them (a new run that records where it started);
 * an adapter zip that does not fit the model is refused saying why.
 */
import { readFileSync } from 'node:fs';
import { unzipSync, zipSync } from 'fflate';
import type { Page } from 'playwright';
import { describe, expect, inject, test } from 'vitest';
import { fillFields, jobOutcome, useBrowser, openPage, screenshot, waitForEditor } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();

/** Clicks `testId` and returns the downloaded file's name and bytes. */
async function download(page: Page, testId: string): Promise<{ name: string; bytes: Buffer }> {
  const [file] = await Promise.all([page.waitForEvent('download'), page.getByTestId(testId).click()]);
  return { name: file.suggestedFilename(), bytes: readFileSync((await file.path())!) };
}

/** Sends one chat message and returns the trained column's answer once it is in. */
async function trainedAnswer(page: Page, text: string): Promise<string> {
  await page.getByTestId('chat-input').fill(text);
  await page.getByTestId('chat-send').click();
  const answer = page.getByTestId('chat-answer-trained').last();
  await expect.poll(() => answer.getAttribute('data-status'), { timeout: 60_000 }).toBe('done');
  return (await answer.locator('.message-content').textContent()) ?? '';
}

describe('import and export', () => {
  test('environment file, results, warm-up data and model weights go out and come back', { timeout: 300_000 }, async () => {
    const { context, page, pageErrors } = await openPage(browser(), appUrl, { inTabModel: 'tiny' });
    await waitForEditor(page);

    // The environment file: download, then import it back (shown for review first).
    const envFile = await download(page, 'export-environment');
    expect(envFile.name).toBe('reverse-text.ts');
    const source = envFile.bytes.toString('utf8');
    expect(source).toContain('export default function loadEnvironment');
    await page.getByTestId('import-environment').setInputFiles({ name: 'my-env.ts', mimeType: 'text/plain', buffer: envFile.bytes });
    await expect.poll(() => page.getByTestId('review').locator('h2').textContent()).toBe('Review imported environment file “my-env.ts”');
    expect(await page.getByTestId('review-code').textContent()).toContain('Reverse a short text');
    await screenshot(page, 'import-environment-review');
    await page.getByTestId('review-load').click();
    await expect.poll(() => page.getByTestId('environment-picker').locator('option:checked').textContent()).toBe('my-env (imported)');
    await page.getByTestId('import-environment').setInputFiles({ name: 'nothing.ts', mimeType: 'text/plain', buffer: Buffer.from('const x = 1;\n') });
    await expect.poll(() => page.getByTestId('transfer-message').textContent()).toMatch(/nothing\.ts defines no loadEnvironment/);

    // Results: back on the built-in file (an imported file has no scripted expert), evaluate, download results.jsonl, parse it.
    await page.getByTestId('environment-picker').selectOption({ label: 'reverse-text' });
    await fillFields(page, { 'setting-numTasks': '3', 'setting-rolloutsPerTask': '1' });
    await page.getByTestId('evaluate').click();
    await page.getByTestId('summary').waitFor({ timeout: 60_000 });
    const results = await download(page, 'export-results');
    expect(results.name).toBe('reverse-text-results.jsonl');
    const lines = results.bytes.toString('utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toHaveLength(3);
    expect(lines.map((line) => line.task_index)).toEqual([0, 1, 2]);
    expect(lines[0]).toMatchObject({ rollout_index: 0, passed: true, stop_reason: expect.any(String) });
    expect(lines[0]!.scores).toHaveProperty('lcsReward', 1);

    // Warm-up data: a short warm-up of the tiny model, then download what it trained on.
    await page.getByTestId('policy-in-tab').click();
    await page.getByTestId('mode-warmup').click();
    await fillFields(page, { 'train-demonstrations': '8', 'train-sftSteps': '6', 'train-sftBatchSize': '4' });
    await page.getByTestId('start-training').click();
    expect(await jobOutcome(page, 150_000)).toMatch(/Warm-up finished\. 8 demonstrations kept/);
    const warmup = await download(page, 'export-warmup');
    expect(warmup.name).toBe('reverse-text-warmup.jsonl');
    const chats = warmup.bytes.toString('utf8').trim().split('\n').map((line) => JSON.parse(line) as { messages: { role: string }[] });
    expect(chats).toHaveLength(8);
    expect(chats[0]!.messages.some((message) => message.role === 'assistant')).toBe(true);
    const bad = `${warmup.bytes.toString('utf8').split('\n')[0]}\n{"messages": [{"role": "user", "content": "x"}]}\n`;
    await page.getByTestId('import-warmup').setInputFiles({ name: 'bad.jsonl', mimeType: 'application/x-ndjson', buffer: Buffer.from(bad) });
    await expect.poll(() => page.getByTestId('transfer-message').textContent()).toMatch(/bad\.jsonl, line 2: no assistant message to train on\. Nothing was imported\./);
    await page.getByTestId('import-warmup').setInputFiles({ name: 'chats.jsonl', mimeType: 'application/x-ndjson', buffer: warmup.bytes });
    await expect.poll(() => page.getByTestId('imported-warmup').textContent()).toMatch(/Warm up trains on 8 chats from chats\.jsonl/);

    // The trained model: a greedy answer, then the weights as a zip.
    await page.getByTestId('tab-chat').click();
    const before = await trainedAnswer(page, 'hello');
    const model = await download(page, 'export-model');
    expect(model.name).toBe('tiny-model.zip');
    const files = unzipSync(new Uint8Array(model.bytes));
    expect(Object.keys(files).sort()).toEqual(['config.json', 'model.safetensors']);
    await page.locator('[data-testid="files-card"]').scrollIntoViewIfNeeded();
    await screenshot(page, 'export-model');
    expect(pageErrors).toEqual([]);
    await context.close();

    // A fresh page: import the zip; the trained column answers as before.
    const fresh = await openPage(browser(), appUrl, { inTabModel: 'tiny' });
    await waitForEditor(fresh.page);
    await fresh.page.getByTestId('tab-chat').click();
    expect(await fresh.page.getByTestId('chat-no-run').textContent()).toMatch(/no trained model yet/);
    const adapter = zipSync({ 'adapter_config.json': new TextEncoder().encode('{"r": 8, "lora_alpha": 16, "target_modules": ["q_proj"]}'), 'adapter_model.safetensors': new Uint8Array(8) });
    await fresh.page.getByTestId('import-model').setInputFiles({ name: 'adapter.zip', mimeType: 'application/zip', buffer: Buffer.from(adapter) });
    await expect.poll(() => fresh.page.getByTestId('transfer-message').textContent(), { timeout: 60_000 }).toMatch(/adapter\.zip is a LoRA adapter, but the loaded model \(tiny\) is fully fine-tuned.*Nothing was loaded\./);
    await fresh.page.getByTestId('import-model').setInputFiles({ name: 'tiny-model.zip', mimeType: 'application/zip', buffer: model.bytes });
    await expect.poll(() => fresh.page.getByTestId('transfer-message').textContent(), { timeout: 60_000 }).toMatch(/Loaded the weights from tiny-model\.zip into the in-tab model/);
    expect(await fresh.page.getByTestId('chat-column-trained').locator('h3').textContent()).toBe('trained — weights from tiny-model.zip');
    expect(await trainedAnswer(fresh.page, 'hello')).toBe(before);
    // The imported weights, not the base: the base column answers otherwise.
    expect(await fresh.page.getByTestId('chat-answer-base').last().locator('.message-content').textContent()).not.toBe(before);
    await screenshot(fresh.page, 'import-model-chat');

    // Train on from the imported weights: one SFT step at the smallest learning rate barely moves
    // them, so the greedy answer stays; a run from fresh weights would answer like the base.
    await fresh.page.getByTestId('policy-in-tab').click();
    await fresh.page.getByTestId('mode-warmup').click();
    await fillFields(fresh.page, { 'train-demonstrations': '4', 'train-sftSteps': '1', 'train-sftBatchSize': '2', 'train-sftLr': '0.000001' });
    await fresh.page.getByTestId('start-training').click();
    expect(await jobOutcome(fresh.page, 150_000)).toMatch(/Warm-up finished/);
    await fresh.page.getByTestId('tab-chat').click();
    await fresh.page.getByTestId('chat-clear').click();
    expect(await trainedAnswer(fresh.page, 'hello')).toBe(before);
    await fresh.page.getByTestId('tab-runs').click();
    await expect.poll(() => fresh.page.getByTestId('runs-started-from').first().textContent()).toBe('from weights from tiny-model.zip');
    expect(fresh.pageErrors).toEqual([]);
    await fresh.context.close();
  });
});
