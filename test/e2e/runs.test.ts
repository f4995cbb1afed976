/**
 * The Runs tab in real Chromium (the in-tab tiny model on whatever WebGPU adapter there is): make
 * two very short GRPO runs, compare them (reward and pass-rate curves overlaid, legend, final
 * metrics), reopen one, delete one after confirming, reload: it is gone. Screenshots runs-*.png,
 * presenter-runs-compare.png.
 */
import type { Page } from 'playwright';
import { describe, expect, inject, test } from 'vitest';
import { useBrowser, openPage, screenshot, waitForEditor } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();

/** Trains a 2-step GRPO run of 2 tasks × 2 samples, 4 tokens each, from fresh weights. */
async function shortRun(page: Page): Promise<void> {
  await page.getByTestId('tab-training').click();
  await page.getByTestId('new-run').click();
  for (const [testId, value] of Object.entries({ 'train-grpoSteps': '2', 'train-tasksPerStep': '2', 'train-groupSize': '2', 'train-maxTokens': '4' })) await page.getByTestId(testId).fill(value);
  await page.getByTestId('start-training').click();
  const ended = page.locator('[data-testid="training-done"], [data-testid="training-failure"]');
  await ended.first().waitFor({ timeout: 150_000 });
  expect(await ended.first().textContent()).toMatch(/Training finished/);
}

/** The class names of panes wider than their box (content that would scroll sideways). */
async function paneOverflow(page: Page): Promise<string[]> {
  return page.evaluate(() => [...document.querySelectorAll<HTMLElement>('.runs-view, .training-view, .lesson-pane, .main-pane, .side-pane, .top-bar')]
    .filter((element) => element.scrollWidth > element.clientWidth + 1)
    .map((element) => `${element.className}: ${element.scrollWidth} > ${element.clientWidth}`));
}

/** The rows of the Runs table, as text. */
async function rows(page: Page): Promise<string[]> {
  return page.getByTestId('runs-row').allTextContents();
}

describe('runs', () => {
  test('two short runs are listed, compared on one chart, reopened, and one is deleted for good', { timeout: 400_000 }, async () => {
    const { context, page, pageErrors } = await openPage(browser(), appUrl, { inTabModel: 'tiny' });
    await waitForEditor(page);
    await page.getByTestId('policy-in-tab').click();
    await page.getByTestId('mode-train').click();
    await shortRun(page);
    await shortRun(page);

    await page.getByTestId('tab-runs').click();
    await expect.poll(() => rows(page)).toHaveLength(2);
    for (const row of await rows(page)) expect(row).toMatch(/reverse-text.*tiny.*0 SFT \+ 2 GRPO\s*\d\.\d{3}\s*\d+\.\d%/);
    await page.getByTestId('runs-compare-check').nth(0).check();
    expect(await page.getByTestId('runs-comparison').count()).toBe(0);
    await page.getByTestId('runs-compare-check').nth(1).check();
    await page.getByTestId('runs-comparison').waitFor();
    expect(await page.getByTestId('compare-reward').locator('canvas').count()).toBe(1);
    expect(await page.getByTestId('compare-pass-rate').locator('canvas').count()).toBe(1);
    expect(await page.getByTestId('compare-legend').locator('li').count()).toBe(2);
    expect(await page.getByTestId('compare-table').locator('tbody tr').count()).toBe(2);
    // Both runs are drawn: uPlot's series (step axis + one per run) with two points each.
    const drawn = await page.getByTestId('compare-reward').evaluate((figure) => figure.querySelectorAll('.u-legend, canvas').length);
    expect(drawn).toBeGreaterThan(0);
    await screenshot(page, 'runs-compare');

    await page.getByTestId('presenter-toggle').click();
    await screenshot(page, 'presenter-runs-compare');
    expect(await paneOverflow(page)).toEqual([]);
    await page.getByTestId('presenter-toggle').click();

    // Reopen one: the Training tab shows its charts.
    await page.getByTestId('runs-open').nth(1).click();
    await expect.poll(() => page.getByTestId('run-grpo-steps').textContent()).toBe('2 GRPO steps');
    // The Training tab's charts in presenter mode, with a lesson beside them, still fit.
    await page.getByTestId('presenter-toggle').click();
    await page.getByTestId('lesson-picker').selectOption('2');
    await page.getByTestId('lesson-panel').waitFor();
    await screenshot(page, 'presenter-training-charts');
    expect(await paneOverflow(page)).toEqual([]);
    await page.getByTestId('lesson-close').click();
    await page.getByTestId('presenter-toggle').click();
    await page.getByTestId('tab-runs').click();

    // Delete asks first: dismissing keeps the run, accepting removes it.
    page.once('dialog', (dialog) => void dialog.dismiss());
    await page.getByTestId('runs-delete').nth(0).click();
    await expect.poll(() => rows(page)).toHaveLength(2);
    let asked = '';
    page.once('dialog', (dialog) => { asked = dialog.message(); void dialog.accept(); });
    await page.getByTestId('runs-delete').nth(0).click();
    await expect.poll(() => rows(page)).toHaveLength(1);
    expect(asked).toMatch(/^Delete the run on reverse-text/);
    expect(await page.getByTestId('runs-comparison').count()).toBe(0);
    await screenshot(page, 'runs-after-delete');

    await page.reload();
    await waitForEditor(page);
    await page.getByTestId('tab-runs').click();
    await expect.poll(() => rows(page), { timeout: 10_000 }).toHaveLength(1);
    expect(pageErrors).toEqual([]);
    await context.close();
  });
});
