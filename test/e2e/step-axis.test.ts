/**
 * A Training chart after a single GRPO step (tiny model, reverse-text, one step of 2 tasks × 4):
 * the job finishes and the reward chart draws its one step; the screenshots show a step axis whose
 * one tick is step 0 (it read 0–100 before; test/browser/ui/step-axis.test.ts asserts the span in uPlot).
 * Screenshots: step-axis-one-step-1280.png and step-axis-one-step-800.png.
 */
import { describe, expect, inject, test } from 'vitest';
import { fillFields, jobOutcome, useBrowser, openPage, screenshot, waitForEditor } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();

describe('Training charts after one GRPO step', () => {
  test('a one-step run finishes and its reward chart draws the step', { timeout: 240_000 }, async () => {
    const { context, page, pageErrors } = await openPage(browser(), appUrl, { inTabModel: 'tiny' });
    await waitForEditor(page);
    await page.getByTestId('policy-in-tab').click();
    await page.getByTestId('mode-train').click();
    await fillFields(page, { 'train-grpoSteps': '1', 'train-tasksPerStep': '2', 'train-groupSize': '4', 'train-maxTokens': '8' });
    await page.getByTestId('start-training').click();
    expect(await jobOutcome(page, 180_000)).toMatch(/Training finished/);
    await expect.poll(() => page.getByTestId('run-grpo-steps').textContent()).toMatch(/^1 GRPO step/);
    const chart = page.getByTestId('chart-reward');
    expect(await chart.locator('canvas').count()).toBe(1);
    await chart.scrollIntoViewIfNeeded();
    await screenshot(page, 'step-axis-one-step-1280');
    await page.setViewportSize({ width: 800, height: 600 });
    await chart.scrollIntoViewIfNeeded();
    await screenshot(page, 'step-axis-one-step-800');
    expect(pageErrors).toEqual([]);
    await context.close();
  });
});
