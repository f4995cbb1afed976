/**
 * The playground's GRPO objective settings and the "More charts" picker in real Chromium: a learner
 * picks a loss type, reward scaling, dynamic sampling and an ECHO weight (each with its help), a
 * short GRPO job runs with them (the stored job keeps them), and the picker adds and removes charts.
 * Screenshots go to test-results/screenshots/.
 */
import type { Page } from 'playwright';
import { expect, inject, test } from 'vitest';
import { fillFields, jobOutcome, useBrowser, openPage, screenshot, waitForEditor } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();

/** The GRPO options of the stored run's last job, read from IndexedDB. */
async function storedJobOptions(page: Page): Promise<Record<string, unknown>> {
  return page.evaluate(async () => {
    const db = await new Promise<IDBDatabase>((resolve, reject) => { const request = indexedDB.open('tabrl-runs'); request.onsuccess = () => resolve(request.result); request.onerror = () => reject(request.error); });
    const runs = await new Promise<{ lastJob: { options: Record<string, unknown> } }[]>((resolve) => { db.transaction('runs').objectStore('runs').getAll().onsuccess = (event) => resolve((event.target as IDBRequest<{ lastJob: { options: Record<string, unknown> } }[]>).result); });
    db.close();
    return runs[0]!.lastJob.options;
  });
}

test('the objective settings reach the trainer, and "More charts" adds and removes charts', { timeout: 300_000 }, async () => {
  const { context, page, pageErrors } = await openPage(browser(), appUrl, { inTabModel: 'tiny' });
  await waitForEditor(page);
  await page.getByTestId('policy-in-tab').click();
  await page.getByTestId('mode-train').click();
  const objective = page.getByTestId('grpo-objective');
  expect(await page.getByTestId('train-lossType').inputValue()).toBe('dapo');
  expect(await page.getByTestId('train-scaleRewards').inputValue()).toBe('none');
  expect(await page.getByTestId('train-turnCredit').inputValue()).toBe('return-to-go');
  await page.getByTestId('train-lossType').selectOption('dr_grpo');
  await page.getByTestId('train-turnCredit').selectOption('turn');
  await page.getByTestId('train-scaleRewards').selectOption('group');
  await page.getByTestId('train-dynamicSampling').check();
  // A number outside a setting's range is clamped into it (groupSize: 2 to 64).
  await page.getByTestId('train-groupSize').fill('1');
  expect(await page.getByTestId('train-groupSize').inputValue()).toBe('2');
  await page.getByTestId('train-groupSize').fill('500');
  expect(await page.getByTestId('train-groupSize').inputValue()).toBe('64');
  await fillFields(page, { 'train-echoWeight': '0.1', 'train-grpoSteps': '2', 'train-tasksPerStep': '1', 'train-groupSize': '2', 'train-maxTokens': '6', 'train-memoryBudget': '64' });
  // Each choice explains itself.
  expect(await objective.textContent()).toContain('no length bias at all (Dr. GRPO)');
  expect(await objective.textContent()).toContain('every task pushes equally hard');
  expect(await objective.textContent()).toContain('when the rubric scores each turn');
  expect(await objective.textContent()).toContain('such tasks are replaced by fresh ones');
  await objective.scrollIntoViewIfNeeded();
  await screenshot(page, '40-grpo-objective-settings');

  await page.getByTestId('start-training').click();
  await page.getByTestId('training-view').waitFor();
  expect(await jobOutcome(page, 200_000)).toMatch(/Training finished/);
  expect(await storedJobOptions(page)).toMatchObject({ lossType: 'dr_grpo', scaleRewards: 'group', turnCredit: 'turn', dynamicSampling: true, echoWeight: 0.1 });
  // WebGPU (SwiftShader here): the step's micro-batch was chosen within the 64 MiB budget set above, said under the settings with why not one more
  const memoryChoice = page.getByTestId('memory-choice');
  expect(await memoryChoice.textContent()).toMatch(/^Latest step: 2 sequences per backward pass at \d+ tokens, \d+ of the 64 MiB budget; not one more: 2 is the most asked for\.$/);
  await memoryChoice.scrollIntoViewIfNeeded();
  await screenshot(page, '42-memory-choice');

  // The default optional charts are the ones the view always had; the picker adds the new metrics.
  for (const key of ['kl', 'entropy', 'gradNorm', 'tokensPerSecond']) expect(await page.getByTestId(`chart-${key}`).locator('canvas').count(), key).toBe(1);
  expect(await page.getByTestId('chart-zeroStdFraction').count()).toBe(0);
  await page.getByTestId('chart-picker').locator('summary').click();
  await page.getByTestId('pick-zeroStdFraction').check();
  await page.getByTestId('pick-clipFraction').check();
  await page.getByTestId('pick-completionLength').check();
  await page.getByTestId('pick-gradNorm').uncheck();
  for (const key of ['zeroStdFraction', 'clipFraction', 'completionLength']) expect(await page.getByTestId(`chart-${key}`).locator('canvas').count(), key).toBe(1);
  expect(await page.getByTestId('chart-gradNorm').count()).toBe(0);
  expect(await page.getByTestId('chart-picker').locator('summary').textContent()).toBe('More charts (6 of 12 shown)');
  await page.getByTestId('chart-picker').scrollIntoViewIfNeeded();
  await screenshot(page, '41-more-charts');
  expect(pageErrors).toEqual([]);
  await context.close();
});
