/**
 * The in-tab model end to end in real Chromium (WebGPU on whatever adapter there is; SwiftShader on
 * CI): evaluate a built-in with the tiny model through the engine worker; warm it up with a few SFT
 * steps and train a few GRPO steps, watching the charts and the rollout viewer update; reload and
 * find the run with its metrics. Settings are tiny so it fits a CPU adapter. Screenshots go to
 * test-results/screenshots/.
 */
import type { Page } from 'playwright';
import { describe, expect, inject, test } from 'vitest';
import { decodeShareHash } from '../../src/ui/features/share/url-state.ts';
import { fillFields, jobOutcome, useBrowser, openPage, screenshot, waitForEditor } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();

/** The step numbers of the GRPO metrics of the one stored run, read from IndexedDB. */
async function storedGrpoSteps(page: Page): Promise<number[]> {
  return page.evaluate(async () => {
    const db = await new Promise<IDBDatabase>((resolve, reject) => { const request = indexedDB.open('tabrl-runs'); request.onsuccess = () => resolve(request.result); request.onerror = () => reject(request.error); });
    const runs = await new Promise<{ grpo: { step: number }[] }[]>((resolve) => { db.transaction('runs').objectStore('runs').getAll().onsuccess = (event) => resolve((event.target as IDBRequest<{ grpo: { step: number }[] }[]>).result); });
    db.close();
    return runs[0]!.grpo.map((metrics) => metrics.step);
  });
}

describe('in-tab model', () => {
  test('evaluates reverse-text with the tiny model through the engine worker', { timeout: 120_000 }, async () => {
    const { context, page, pageErrors } = await openPage(browser(), appUrl, { inTabModel: 'tiny' });
    await waitForEditor(page);
    await page.getByTestId('policy-in-tab').click();
    expect(await page.getByTestId('setting-args').inputValue()).toContain('"compact":true');
    await expect.poll(() => page.getByTestId('engine-status').textContent(), { timeout: 60_000 }).toMatch(/parameter model over bytes/);
    await fillFields(page, { 'setting-numTasks': '2', 'setting-rolloutsPerTask': '2', 'setting-maxTokens': '8' });
    await page.getByTestId('evaluate').click();
    await page.getByTestId('summary').waitFor({ timeout: 90_000 });
    await expect.poll(() => page.getByTestId('summary').textContent()).toMatch(/4\s*rollouts · 2 tasks/);
    expect(await page.getByTestId('error-count').textContent()).toMatch(/^0 with errors/);
    await screenshot(page, '10-in-tab-evaluation');
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  test('warms up with SFT, trains with GRPO, shows charts and rollouts, and keeps the run across a reload', { timeout: 300_000 }, async () => {
    const { context, page, pageErrors } = await openPage(browser(), appUrl, { inTabModel: 'tiny' });
    page.on('console', (message) => { if (message.type() === 'error') console.log(`page: ${message.text()}`); });
    await waitForEditor(page);
    await page.getByTestId('policy-in-tab').click();
    // A baseline of the fresh weights before any run: the run the warm-up starts keeps it as its "before".
    await fillFields(page, { 'setting-numTasks': '2', 'setting-rolloutsPerTask': '1', 'setting-maxTokens': '8' });
    await page.getByTestId('evaluate').click();
    await page.getByTestId('summary').waitFor({ timeout: 90_000 });
    const baselineReward = await page.getByTestId('reward-mean').textContent();

    await page.getByTestId('mode-warmup').click();
    await fillFields(page, { 'train-demonstrations': '8', 'train-sftSteps': '3', 'train-sftBatchSize': '4', 'train-checkpointEvery': '2' });
    await page.getByTestId('start-training').click();
    await page.getByTestId('training-view').waitFor();
    expect(await jobOutcome(page, 150_000)).toMatch(/Warm-up finished\. 8 demonstrations kept/);
    await expect.poll(() => page.getByTestId('run-sft-steps').textContent()).toBe('3 SFT steps');
    const evaluations = page.getByTestId('run-evaluations').locator('tbody tr');
    expect(await evaluations.count()).toBe(1);
    expect(await evaluations.first().locator('td').allTextContents()).toEqual(['before training (the starting weights)', baselineReward!.split(' ')[0], expect.stringMatching(/%$/)]);
    expect(await page.getByTestId('chart-sft-loss').locator('canvas').count()).toBe(1);
    await screenshot(page, '11-warmup');

    await page.getByTestId('mode-train').click();
    await fillFields(page, { 'train-grpoSteps': '2', 'train-tasksPerStep': '2', 'train-groupSize': '4', 'train-maxTokens': '8' });
    await page.getByTestId('start-training').click();
    await expect.poll(() => page.getByTestId('training-progress').textContent(), { timeout: 30_000 }).toMatch(/GRPO/);
    await screenshot(page, '12-training-progress');
    expect(await jobOutcome(page, 150_000)).toMatch(/Training finished/);
    await expect.poll(() => page.getByTestId('run-grpo-steps').textContent()).toBe('2 GRPO steps');
    expect(await page.getByTestId('training-rollout').count()).toBe(8);
    expect(await page.getByTestId('token').count()).toBeGreaterThan(0);
    expect(await page.getByTestId('training-rollouts').textContent()).toMatch(/Rollouts of step 1/);
    await screenshot(page, '13-training');
    await page.getByTestId('training-rollouts').scrollIntoViewIfNeeded();
    await screenshot(page, '13b-training-rollouts');

    // Stop really stops: a long run ends within seconds, keeping the steps it finished.
    await fillFields(page, { 'train-grpoSteps': '200' });
    await page.getByTestId('start-training').click();
    await expect.poll(() => page.getByTestId('training-progress').textContent(), { timeout: 60_000 }).toMatch(/GRPO: [1-9]\d* \/ 200 steps/);
    const stopped = Date.now();
    await page.getByTestId('stop-training').click();
    expect(await jobOutcome(page, 20_000)).toMatch(/Training stopped/);
    expect(Date.now() - stopped).toBeLessThan(20_000);
    const afterStop = Number((await page.getByTestId('run-grpo-steps').textContent())?.match(/\d+/)?.[0]);
    expect(afterStop).toBeGreaterThan(2);
    expect(afterStop).toBeLessThan(202);
    expect(await page.locator('iframe[data-testid="sandbox-frame"]').count()).toBe(0);

    // A share link carries the training settings and the mode.
    await page.getByTestId('share').click();
    await expect.poll(() => page.url()).toContain('#v=1');
    expect(decodeShareHash(new URL(page.url()).hash)).toMatchObject({ mode: 'train', policy: 'in-tab', training: { grpoSteps: 200, groupSize: 4, tasksPerStep: 2, sftSteps: 3 } });

    await page.goto(appUrl);
    await waitForEditor(page);
    await page.getByTestId('tab-training').click();
    await page.getByTestId('show-runs').click();
    await expect.poll(() => page.getByTestId('runs-row').count(), { timeout: 10_000 }).toBe(1);
    expect(await page.getByTestId('runs-row').textContent()).toContain(`3 SFT + ${afterStop} GRPO`);
    await page.getByTestId('runs-open').click();
    await expect.poll(() => page.getByTestId('run-grpo-steps').textContent()).toBe(`${afterStop} GRPO step${afterStop === 1 ? '' : 's'}`);
    expect(await page.getByTestId('chart-reward').locator('canvas').count()).toBe(1);
    await screenshot(page, '14-reopened-run');

    // Another file is open now, with changed code: a copy of the built-in with one more line.
    await page.getByTestId('new-from-builtin').selectOption('reverse-text');
    await expect.poll(() => page.getByTestId('environment-picker').locator('option:checked').textContent()).toBe('reverse-text (2)');
    await page.getByTestId('tab-editor').click();
    await waitForEditor(page);
    await page.locator('.monaco-editor .view-lines').first().click();
    await page.keyboard.press('Control+End');
    await page.keyboard.type('\n// a change made after the run started\n');
    await page.getByTestId('tab-training').click();

    // Continue: the interrupted 200-step job resumes at its next step from the full checkpoint
    // (weights and AdamW state), with its own code, arguments and settings, although the panel now
    // shows the defaults and another file is open.
    const jobStep = afterStop - 2; // steps the 200-step job had taken (the run's first 2 came from the earlier job)
    await page.getByTestId('mode-train').click();
    expect(await page.getByTestId('start-training').textContent()).toBe(`Continue training (step ${jobStep + 1} / 200)`);
    expect(await page.getByTestId('continue-note').textContent()).toMatch(/Continues the open run on reverse-text with its own code \(from the file “reverse-text”\), arguments and settings \(200 GRPO steps\)/);
    await page.getByTestId('start-training').click();
    const note = async () => (await page.locator('[data-testid="training-note"]').allTextContents()).join('');
    await expect.poll(note, { timeout: 60_000 }).toMatch(/Continuing the run with its own code \(from the file “reverse-text”\), arguments and settings; the open file “reverse-text \(2\)” differs and is not used\./);
    const resumed = /Continued from the checkpoint before GRPO step (\d+) of 200 \(optimizer step (\d+) restored\)/;
    await expect.poll(note, { timeout: 60_000 }).toMatch(resumed);
    const [, beforeStep, optimizerStep] = (await note()).match(resumed)!.map(Number);
    expect(beforeStep).toBe(jobStep + 1);
    // A fresh optimizer would be at step 0: the state came back (3 SFT updates, then the GRPO ones that were not skipped).
    expect(optimizerStep).toBeGreaterThanOrEqual(3);
    expect(optimizerStep).toBeLessThanOrEqual(3 + afterStop);
    await expect.poll(() => page.getByTestId('training-progress').textContent(), { timeout: 60_000 }).toMatch(new RegExp(`GRPO: ${jobStep + 1} / 200 steps`));
    await page.getByTestId('stop-training').click();
    expect(await jobOutcome(page, 20_000)).toMatch(/Training stopped/);
    const afterContinue = Number((await page.getByTestId('run-grpo-steps').textContent())?.match(/\d+/)?.[0]);
    expect(afterContinue).toBeGreaterThan(afterStop);
    // The stored run's GRPO steps are numbered 0, 1, ... without a gap or a repeat across the reload.
    expect(await storedGrpoSteps(page)).toEqual(Array.from({ length: afterContinue }, (_, i) => i));
    await screenshot(page, '14b-continued-run');

    // A new job on the run (a warm-up) with the changed file asks first; declining starts nothing.
    await page.getByTestId('mode-warmup').click();
    const question = new Promise<string>((resolve) => page.once('dialog', (dialog) => { resolve(dialog.message()); void dialog.dismiss(); }));
    await page.getByTestId('start-training').click();
    expect(await question).toMatch(/The open run on reverse-text \(3 SFT \+ \d+ GRPO steps\) was trained with other code \(from the file “reverse-text”\) than the open file “reverse-text \(2\)” has now\. Train this run further with the changed code\?/);
    await expect.poll(() => page.getByTestId('start-training').isEnabled(), { timeout: 20_000 }).toBe(true);
    expect(await page.getByTestId('run-sft-steps').textContent()).toBe('3 SFT steps');
    expect(await page.getByTestId('training-failure').count()).toBe(0);
    await page.getByTestId('environment-picker').selectOption({ label: 'reverse-text' });
    await page.getByTestId('mode-train').click();

    // A corrupt checkpoint says so and keeps the run.
    await page.evaluate(async () => {
      const db = await new Promise<IDBDatabase>((resolve, reject) => { const request = indexedDB.open('tabrl-runs'); request.onsuccess = () => resolve(request.result); request.onerror = () => reject(request.error); });
      const store = db.transaction('checkpoints', 'readwrite').objectStore('checkpoints');
      const checkpoint = await new Promise<{ files: Record<string, Uint8Array> }>((resolve) => { store.getAll().onsuccess = (event) => resolve((event.target as IDBRequest<{ files: Record<string, Uint8Array> }[]>).result[0]!); });
      checkpoint.files['weights.safetensors'] = new Uint8Array([1, 2, 3]);
      await new Promise((resolve) => { store.put(checkpoint).onsuccess = resolve; });
    });
    await page.goto(appUrl);
    await waitForEditor(page);
    await page.getByTestId('tab-runs').click();
    await page.getByTestId('runs-open').click();
    await page.getByTestId('mode-train').click();
    await page.getByTestId('start-training').click();
    expect(await jobOutcome(page, 60_000)).toMatch(/checkpoint of the open run .* is corrupt .*weights\.safetensors.*metrics and evaluations are kept/);
    await page.getByTestId('tab-runs').click();
    expect(await page.getByTestId('runs-row').textContent()).toContain(`3 SFT + ${afterContinue} GRPO`);
    expect(await storedGrpoSteps(page)).toHaveLength(afterContinue);
    expect(pageErrors).toEqual([]);
    await context.close();
  });
});
