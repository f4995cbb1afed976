/**
 * Task synthesis during GRPO in the tab, end to end in Chromium and offline: the Studio's sample
 * document makes an environment of closed-book questions, and a two-step GRPO job of the tiny model
 * with synthesis on (offline heuristic generator, a refresh after every step, 2 attempts per task)
 * shows each refresh in the training view: pool size, what joined and retired, the histogram.
 * Screenshots go to test-results/screenshots/.
 */
import { describe, expect, inject, test } from 'vitest';
import { fillFields, jobOutcome, useBrowser, openPage, screenshot, waitForEditor } from './browser.ts';

const appUrl = inject('appUrl');
/** A document of facts the heuristic generator makes cloze questions of. */
const KESSEL = 'The lighthouse on Kessel Point was first lit in 1887 by the harbour board.\n\nThe ferry to Orrin Island leaves from the north quay at Brannock twice a day.\n\nThe old customs house on Tallow Street became the town museum in 1962.';
const browser = useBrowser();

describe('task synthesis during training', () => {
  test('a short GRPO job with synthesis on shows its refreshes in the training view', { timeout: 120_000 }, async () => {
    const { context, page, pageErrors } = await openPage(browser(), appUrl, { inTabModel: 'tiny' });
    await page.setViewportSize({ width: 1280, height: 900 });
    await waitForEditor(page);
    await page.getByTestId('tab-studio').click();
    await page.getByTestId('studio-section-documents').click();
    await page.getByTestId('document-add-sample').click();
    await page.getByTestId('synthesis-start').click();
    await page.getByTestId('synthesis-report').waitFor({ timeout: 30_000 });
    await page.getByTestId('synthesis-open').click();
    await waitForEditor(page, 'closed-book questions');

    await page.getByTestId('policy-in-tab').click();
    await expect.poll(() => page.getByTestId('engine-status').textContent(), { timeout: 60_000 }).toMatch(/parameter model over bytes/);
    await page.getByTestId('mode-train').click();
    await fillFields(page, { 'train-grpoSteps': '2', 'train-tasksPerStep': '2', 'train-groupSize': '2', 'train-maxTokens': '8', 'train-checkpointEvery': '0' });
    await page.getByTestId('pool-synthesis').locator('summary').click();
    await page.getByTestId('pool-synthesis-on').check();
    expect(await page.getByTestId('pool-synthesis-documents').textContent()).toMatch(/1 document from the Studio: aldermoor\.md/);
    // A document added here joins the Studio's list: the second refresh takes it (the first takes the sample, whose kept questions are in the pool already).
    await page.getByTestId('pool-synthesis-files').setInputFiles([{ name: 'kessel.md', mimeType: 'text/markdown', buffer: Buffer.from(KESSEL) }]);
    await expect.poll(() => page.getByTestId('pool-synthesis-documents').textContent()).toMatch(/2 documents from the Studio: aldermoor\.md, kessel\.md/);
    await fillFields(page, { 'pool-synthesis-every': '1', 'pool-synthesis-k': '2' });
    await screenshot(page, 'pool-synthesis-settings');
    await page.getByTestId('start-training').click();
    expect(await jobOutcome(page, 90_000)).toMatch(/Training finished/);

    await page.getByTestId('tab-training').click();
    const rows = page.getByTestId('pool-refresh-row');
    await expect.poll(() => rows.count()).toBe(2);
    // Refresh 1 after step 0 (the sample document), refresh 2 after step 1 (kessel.md, whose questions are new: measured by the policy).
    const first = await rows.first().locator('td').allTextContents();
    expect(first.slice(0, 2)).toEqual(['1', '0']);
    expect(first[2]).toMatch(/^\d+ → \d+$/);
    const second = await rows.nth(1).locator('td').allTextContents();
    expect(second.slice(0, 2)).toEqual(['2', '1']);
    expect(Number(second[3])).toBeGreaterThan(0);
    expect(await page.getByTestId('pool-now').textContent()).toMatch(/Pool now: \d+ tasks, \d+ retired; refresh after every step, keep band 0\.2–0\.8, 2 attempts per task, generator offline heuristic/);
    expect(await page.getByTestId('chart-pool-size').locator('canvas').count()).toBe(1);
    expect(await page.getByTestId('pool-refresh-error').count()).toBe(0);
    await page.getByTestId('pool-refreshes').scrollIntoViewIfNeeded();
    await screenshot(page, 'pool-synthesis-refreshes');
    expect(pageErrors).toEqual([]);
    await context.close();
  });
});
