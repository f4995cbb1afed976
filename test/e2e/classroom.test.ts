/**
 * What a teacher trips over in a class, in real Chromium: arguments that follow one file into
 * another, a run card that keeps another file's or lesson's numbers, "Start lesson" below the fold of
 * an 800×600 lesson pane, Chat columns squeezed to a sliver, presenter mode clipping the summary's
 * numbers, the tabs wrapping beside a lesson, "Link copied" pushing Share onto a second row, chart
 * legends cut off, pasted paragraphs read as one passage, and the Policy card choosing an expert a
 * generated file does not have. Screenshots: classroom-<what>-<width>.png.
 */
import type { Page } from 'playwright';
import { describe, expect, inject, test } from 'vitest';
import { fillFields, jobOutcome, useBrowser, openPage, screenshot, waitForEditor, waitForSummary } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();

/** The box of the element with test id `testId`. */
async function box(page: Page, testId: string): Promise<{ top: number; bottom: number; left: number; right: number; width: number; height: number }> {
  return page.getByTestId(testId).evaluate((element) => {
    const rect = element.getBoundingClientRect();
    return { top: rect.top, bottom: rect.bottom, left: rect.left, right: rect.right, width: rect.width, height: rect.height };
  });
}

/** Summary numbers whose text is wider than their box or sticks out of the summary. */
async function clippedMetrics(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const summary = document.querySelector<HTMLElement>('[data-testid="summary"]')!.getBoundingClientRect();
    const found: string[] = [];
    for (const value of document.querySelectorAll<HTMLElement>('.metric-value')) {
      const rect = value.getBoundingClientRect();
      for (const part of value.querySelectorAll<HTMLElement>('small')) {
        const inner = part.getBoundingClientRect();
        if (inner.right > rect.right + 1 || inner.right > summary.right + 1) found.push(`"${part.textContent}" ends at ${Math.round(inner.right)}, past ${Math.round(Math.min(rect.right, summary.right))}`);
      }
      if (value.scrollWidth > value.clientWidth + 1 || rect.right > summary.right + 1) found.push(`"${value.textContent}" is ${value.scrollWidth} px wide in ${value.clientWidth}`);
    }
    return found;
  });
}

/** Chart legend entries that are cut off or stick out of their chart. */
async function clippedLegends(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const found: string[] = [];
    for (const chart of document.querySelectorAll<HTMLElement>('.chart')) {
      const frame = chart.getBoundingClientRect();
      const legend = chart.querySelector<HTMLElement>('.chart-legend');
      if (legend && legend.scrollWidth > legend.clientWidth + 1) found.push(`${chart.dataset.testid}: legend ${legend.scrollWidth} px in ${legend.clientWidth}`);
      for (const item of chart.querySelectorAll<HTMLElement>('.chart-legend span')) {
        const rect = item.getBoundingClientRect();
        if (rect.right > frame.right + 1 || rect.left < frame.left - 1) found.push(`${chart.dataset.testid}: "${item.textContent}" at ${Math.round(rect.left)}–${Math.round(rect.right)} outside ${Math.round(frame.left)}–${Math.round(frame.right)}`);
      }
    }
    return found;
  });
}

describe('classroom', () => {
  test('lesson 1 at 1280 and 800: arguments per file, a clean run card after switching, presenter numbers, tabs and Share on one row, Start lesson in view', { timeout: 180_000 }, async () => {
    const { page, pageErrors, context } = await openPage(browser(), `${appUrl}#lesson=1`);
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    await page.setViewportSize({ width: 1280, height: 720 });
    await waitForEditor(page);
    await page.getByTestId('lesson-start').click();
    await expect.poll(() => page.locator('[data-testid="environment-picker"] option:checked').textContent()).toBe('Lesson 1 · reverse-text');

    // A key the file never reads is warned about in the run card, with the key it likely meant.
    await page.getByTestId('setting-args').fill('{"numtasks": 3, "answers": "practice"}');
    await page.getByTestId('evaluate').click();
    await waitForSummary(page);
    await expect.poll(() => page.getByTestId('unused-args').textContent()).toMatch(/"numtasks" was not used by the environment; did you mean "numTasks"\?.*"answers" was not used/);
    await page.getByTestId('setting-args').fill('{}');
    await page.getByTestId('evaluate').click();
    await waitForSummary(page);
    expect(await page.getByTestId('unused-args').count()).toBe(0);
    expect(await page.getByTestId('pass-rate').textContent()).toBe('100.0%');

    // The tabs stay on one row beside the lesson (Rollouts carries its count), and "Link copied" leaves Share where it was.
    await screenshot(page, 'classroom-tabs-1280');
    const widths = await page.locator('.tabs button').evaluateAll((buttons) => buttons.map((button) => `${button.textContent}:${Math.round(button.getBoundingClientRect().width)}`).join(' '));
    const editorTab = await box(page, 'tab-editor');
    expect((await box(page, 'tab-studio')).top, widths).toBe(editorTab.top);
    const shareBefore = await box(page, 'share');
    await page.getByTestId('share').click();
    await page.getByTestId('share-toast').waitFor();
    expect(await box(page, 'share')).toEqual(shareBefore);
    await screenshot(page, 'classroom-link-copied-1280');

    // Presenter mode at 1280×720: "± 0.000" and "100.0%" are whole.
    await page.getByTestId('presenter-toggle').click();
    await page.waitForTimeout(150);
    expect(await clippedMetrics(page)).toEqual([]);
    await screenshot(page, 'classroom-presenter-summary-1280');
    await page.getByTestId('presenter-toggle').click();

    // Another file gets its own arguments and a clean run card; the lesson file keeps its own.
    await page.getByTestId('setting-args').fill('{"numEvalTasks": 4}');
    await page.getByTestId('new-from-builtin').selectOption('wordle');
    await expect.poll(() => page.locator('[data-testid="environment-picker"] option:checked').textContent()).toBe('wordle');
    expect(await page.getByTestId('setting-args').inputValue()).toBe('{}');
    expect(await page.getByTestId('summary').count()).toBe(0);
    const lessonFile = await page.locator('[data-testid="environment-picker"] option', { hasText: 'Lesson 1 · reverse-text' }).getAttribute('value');
    await page.getByTestId('environment-picker').selectOption(lessonFile!);
    expect(await page.getByTestId('setting-args').inputValue()).toBe('{"numEvalTasks": 4}');

    // A lesson link to another lesson leaves the last lesson's numbers behind.
    await page.getByTestId('evaluate').click();
    await waitForSummary(page);
    await page.evaluate(() => {
      location.hash = 'lesson=2';
    });
    await expect.poll(() => page.getByTestId('lesson-title').textContent()).toBe('Warm up and train nano, and read the curves');
    await expect.poll(() => page.getByTestId('summary').count()).toBe(0);

    // 800×600: Start lesson is in view in the short lesson pane, without scrolling it.
    await page.setViewportSize({ width: 800, height: 600 });
    await page.waitForTimeout(150);
    const pane = await box(page, 'lesson-panel');
    const start = await box(page, 'lesson-start');
    expect(start.bottom).toBeLessThanOrEqual(pane.bottom);
    expect(start.top).toBeGreaterThanOrEqual(pane.top);
    await screenshot(page, 'classroom-lesson-pane-800');
    await page.setViewportSize({ width: 1280, height: 720 });
    await screenshot(page, 'classroom-lesson-pane-1280');
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  test('studio: four pasted paragraphs are four passages with a question each; the generated file has no expert and the Policy card does not choose it', { timeout: 120_000 }, async () => {
    const { page, pageErrors, context } = await openPage(browser(), appUrl);
    await waitForEditor(page);
    await page.getByTestId('tab-studio').click();
    await page.getByTestId('studio-section-documents').click();
    const paragraphs = [
      'The ferry to Aldermoor leaves the mainland at 7 every morning.',
      'Its harbour wall was rebuilt in 1911 after a winter storm.',
      'The town keeps 40 fishing boats in the inner basin all year.',
      'A market fills the square on 3 Saturdays of each month.',
    ];
    await page.getByTestId('document-paste').fill(paragraphs.join('\n\n'));
    await page.getByTestId('document-add-pasted').click();
    await page.getByTestId('synthesis-start').click();
    await page.getByTestId('synthesis-report').waitFor({ timeout: 30_000 });
    const questions = await page.getByTestId('candidate-row').allTextContents();
    expect(questions).toHaveLength(4);
    for (const [i, number] of ['7', '1911', '40', '3'].entries()) expect(questions[i]).toContain(number);
    expect(await page.locator('[data-testid="candidate-row"][data-kept="true"]').count()).toBe(4);
    await page.getByTestId('synthesis-open').click();
    await waitForEditor(page, 'closed-book questions');
    for (const width of [1280, 800]) {
      await page.setViewportSize({ width, height: 720 });
      expect(await page.getByTestId('policy-expert').getAttribute('aria-checked')).toBe('false');
      expect(await page.getByTestId('policy-expert').isDisabled()).toBe(true);
      await page.getByTestId('policy-expert').scrollIntoViewIfNeeded();
      await screenshot(page, `classroom-policy-generated-${width}`);
    }
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  test('lesson 6 after a short GRPO run: Chat columns usable at 800×600 and 1280, legends whole, guessesMetric off the reward axis', { timeout: 300_000 }, async () => {
    const { page, pageErrors, context } = await openPage(browser(), `${appUrl}#lesson=6`);
    await page.setViewportSize({ width: 1280, height: 720 });
    await waitForEditor(page);
    await page.getByTestId('lesson-start').click();
    await expect.poll(() => page.getByTestId('engine-status').textContent(), { timeout: 60_000 }).toMatch(/nano-wordle \(pretrained/);
    await page.getByTestId('mode-train').click();
    await fillFields(page, { 'train-grpoSteps': '1', 'train-tasksPerStep': '1', 'train-groupSize': '2' });
    await page.getByTestId('start-training').click();
    expect(await jobOutcome(page, 240_000)).toMatch(/Training finished/);

    for (const [width, height] of [[1280, 720], [800, 600]] as const) {
      await page.setViewportSize({ width, height });
      await page.getByTestId('tab-training').click();
      await page.waitForTimeout(200);
      expect(await clippedLegends(page), `${width} px`).toEqual([]);
      const rewardLegend = await page.getByTestId('chart-reward').locator('.chart-legend').textContent();
      expect(rewardLegend).toContain('compactWinReward');
      expect(rewardLegend).not.toContain('guessesMetric');
      await screenshot(page, `classroom-charts-${width}`);

      await page.getByTestId('tab-chat').click();
      await page.waitForTimeout(150);
      const columns = await page.getByTestId('chat-columns').locator('.chat-column').evaluateAll((elements) => elements.map((element) => element.getBoundingClientRect()).map((rect) => ({ width: rect.width, height: rect.height })));
      expect(columns).toHaveLength(2);
      for (const column of columns) {
        expect(column.width, `${width} px`).toBeGreaterThan(150);
        expect(column.height, `${width} px`).toBeGreaterThan(150);
      }
      await screenshot(page, `classroom-chat-${width}`);
    }
    expect(pageErrors).toEqual([]);
    await context.close();
  });
});
