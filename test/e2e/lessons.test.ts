/**
 * Lessons and presenter mode in real Chromium at 1280×720: a lesson link opens the lesson's text
 * (and runs nothing); Start lesson sets up its file, policy and settings; lesson 1 evaluates with the
 * expert. Presenter mode (large type) fits the projector size in every tab: no pane scrolls
 * sideways and nothing sticks out of the window. Screenshots: lesson-*.png, presenter-*.png.
 */
import type { Page } from 'playwright';
import { describe, expect, inject, test } from 'vitest';
import { useBrowser, openPage, screenshot, waitForEditor, waitForSummary } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();

/** Panes that scroll sideways (scrollWidth past clientWidth) or stick out of the window, by selector. */
async function overflows(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const found: string[] = [];
    const root = document.documentElement;
    if (root.scrollWidth > root.clientWidth) found.push(`page: scrollWidth ${root.scrollWidth} > ${root.clientWidth}`);
    for (const selector of ['.top-bar', '.tabs', '.lesson-pane', '.main-pane', '.side-pane', '.training-view', '.runs-view', '.card']) {
      for (const element of document.querySelectorAll<HTMLElement>(selector)) {
        if (element.scrollWidth > element.clientWidth + 1) found.push(`${selector}: scrollWidth ${element.scrollWidth} > clientWidth ${element.clientWidth}`);
        const box = element.getBoundingClientRect();
        if (box.right > window.innerWidth + 1) found.push(`${selector}: right edge ${Math.round(box.right)} > ${window.innerWidth}`);
      }
    }
    return found;
  });
}

describe('lessons', () => {
  test('a lesson link opens lesson 1; Start lesson sets it up and the expert evaluates it', { timeout: 90_000 }, async () => {
    const { context, page, pageErrors } = await openPage(browser(), `${appUrl}#lesson=1`);
    await page.getByTestId('lesson-panel').waitFor();
    expect(await page.getByTestId('lesson-title').textContent()).toBe('Write a reward function and evaluate it');
    // The link only opened the text: no run started and no file was made.
    await waitForEditor(page, 'Reverse a short text');
    expect(await page.getByTestId('environment-picker').locator('option').allTextContents()).not.toContain('Lesson 1 · reverse-text');
    expect(await page.getByTestId('progress').count()).toBe(0);
    await screenshot(page, 'lesson-1-link');

    await page.getByTestId('lesson-start').click();
    await expect.poll(() => page.getByTestId('lesson-note').textContent()).toMatch(/Opened "Lesson 1 · reverse-text".*scripted expert.*Evaluate/);
    await expect.poll(() => page.locator('[data-testid="environment-picker"] option:checked').textContent()).toBe('Lesson 1 · reverse-text');
    expect(await page.getByTestId('setting-numTasks').inputValue()).toBe('10');
    expect(await page.getByTestId('policy-expert').getAttribute('aria-checked')).toBe('true');
    await page.getByTestId('evaluate').click();
    await waitForSummary(page);
    expect(await page.getByTestId('reward-mean').textContent()).toMatch(/^1\.200/);
    expect(await page.getByTestId('pass-rate').textContent()).toBe('100.0%');
    await screenshot(page, 'lesson-1-evaluated');

    // Starting again reopens the same file rather than making another.
    await page.getByTestId('lesson-start').click();
    await expect.poll(() => page.getByTestId('lesson-note').textContent()).toMatch(/Reopened/);
    expect((await page.getByTestId('environment-picker').locator('option').allTextContents()).filter((name) => name === 'Lesson 1 · reverse-text')).toHaveLength(1);
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  test('the Lessons menu opens each lesson; lesson 4 sets up its own judge source; a bad link says why', { timeout: 90_000 }, async () => {
    const { context, page, pageErrors } = await openPage(browser(), appUrl);
    await waitForEditor(page, 'Reverse a short text');
    await page.getByTestId('lesson-picker').selectOption('4');
    await expect.poll(() => page.getByTestId('lesson-title').textContent()).toMatch(/reward hacking/);
    expect(page.url()).toMatch(/#lesson=4$/);
    await page.getByTestId('lesson-start').click();
    await waitForEditor(page, 'Lesson 4: a judge that can be fooled');
    await expect.poll(() => page.getByTestId('problems').textContent(), { timeout: 20_000 }).toBe('No problems');
    await page.getByTestId('evaluate').click();
    await waitForSummary(page);
    // Honest poems meet the constraints, but the gullible judge fails them.
    expect(await page.getByTestId('pass-rate').textContent()).toBe('0.0%');
    expect(await page.getByTestId('summary').textContent()).toMatch(/twoLinesMetric/);
    await screenshot(page, 'lesson-4-judge');

    await page.goto(`${appUrl}#lesson=9`);
    await page.reload();
    await expect.poll(() => page.getByTestId('lesson-link-error').textContent()).toMatch(/There is no lesson 9; the lessons are 1–\d/);
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  test('presenter mode fits 1280×720 with the lesson beside the editor, charts and runs, and is remembered', { timeout: 90_000 }, async () => {
    const { context, page, pageErrors } = await openPage(browser(), `${appUrl}#lesson=2`);
    await waitForEditor(page, 'Reverse a short text');
    await page.getByTestId('lesson-panel').waitFor();
    expect(await overflows(page)).toEqual([]);
    await screenshot(page, 'lesson-2-normal');

    await page.getByTestId('presenter-toggle').click();
    await expect.poll(() => page.evaluate(() => getComputedStyle(document.documentElement).fontSize)).toBe('20px');
    await page.getByTestId('lesson-start').click();
    await page.getByTestId('lesson-note').waitFor();
    expect(await overflows(page)).toEqual([]);
    await screenshot(page, 'presenter-lesson-editor');
    // Every tab of the main pane, whichever there are.
    const tabs = (await page.locator('.tabs [role="tab"]').evaluateAll((buttons) => buttons.map((button) => button.getAttribute('data-testid') ?? ''))).map((id) => id.replace(/^tab-/, ''));
    expect(tabs).toEqual(expect.arrayContaining(['editor', 'rollouts', 'training', 'runs']));
    for (const tab of tabs.filter((id) => id !== 'editor')) {
      await page.getByTestId(`tab-${tab}`).click();
      expect(await overflows(page), tab).toEqual([]);
      await screenshot(page, `presenter-${tab}`);
    }
    await page.getByTestId('lesson-close').click();
    await page.getByTestId('tab-editor').click();
    expect(await overflows(page)).toEqual([]);
    await screenshot(page, 'presenter-no-lesson');

    // The settings Start lesson chose survive a reload (lesson 2: the in-tab model, Warm up, its held-out tasks and arguments).
    const numTasks = await page.getByTestId('setting-numTasks').inputValue();
    const args = await page.getByTestId('setting-args').inputValue();
    expect(args).toContain('"compact":true');
    await page.reload();
    await waitForEditor(page, 'Reverse a short text');
    expect(await page.getByTestId('presenter-toggle').getAttribute('aria-pressed')).toBe('true');
    expect(await page.getByTestId('setting-numTasks').inputValue()).toBe(numTasks);
    expect(await page.getByTestId('setting-args').inputValue()).toBe(args);
    expect(await page.getByTestId('policy-in-tab').getAttribute('aria-checked')).toBe('true');
    expect(await page.getByTestId('mode-warmup').getAttribute('aria-checked')).toBe('true');
    await page.getByTestId('presenter-toggle').click();
    expect(await page.evaluate(() => getComputedStyle(document.documentElement).fontSize)).toBe('17px');
    expect(pageErrors).toEqual([]);
    await context.close();
  });
});
