/**
 * The layout at 800, 1280 and 1920 px wide, in normal and presenter mode, with a lesson open and a
 * run present (a short warm-up of nano, the default model, an evaluation, and a model download that failed
 * with a long URL in its message): in every tab no pane scrolls sideways, nothing sticks out of the
 * window, the main pane keeps a usable width, and the Runs table's Open and Delete stay in view.
 * Screenshots: layout-<width>-<mode>-<tab>.png.
 */
import type { Page } from 'playwright';
import { describe, expect, inject, test } from 'vitest';
import { fillFields, jobOutcome, useBrowser, openPage, screenshot, waitForEditor, waitForSummary } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();

/** Panes that scroll sideways or stick out of the window, the main pane's width, and whether the Runs table's buttons are in view. */
async function layoutProblems(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const found: string[] = [];
    // The widest thing inside an overflowing element, so a failure says what to fix.
    const culprit = (element: HTMLElement): string => {
      const right = element.getBoundingClientRect().left + element.clientWidth;
      let worst: { right: number; name: string } | null = null;
      for (const child of element.querySelectorAll<HTMLElement>('*')) {
        const box = child.getBoundingClientRect();
        if (box.right > right + 1 && (!worst || box.right > worst.right)) worst = { right: box.right, name: `${child.tagName.toLowerCase()}${child.className && typeof child.className === 'string' ? `.${child.className.split(' ').join('.')}` : ''}${child.dataset.testid ? `[${child.dataset.testid}]` : ''} "${(child.textContent ?? '').slice(0, 40)}"` };
      }
      return worst ? ` (widest: ${worst.name})` : '';
    };
    const root = document.documentElement;
    if (root.scrollWidth > root.clientWidth) found.push(`page: scrollWidth ${root.scrollWidth} > ${root.clientWidth}`);
    const selectors = ['.top-bar', '.tabs', '.lesson-pane', '.main-pane', '.side-pane', '.training-view', '.runs-view', '.chat-view', '.studio-view', '.viewer', '.card', '.failure', '[role="alert"]'];
    for (const selector of selectors) {
      for (const element of document.querySelectorAll<HTMLElement>(selector)) {
        if (element.scrollWidth > element.clientWidth + 1) found.push(`${selector}: scrollWidth ${element.scrollWidth} > clientWidth ${element.clientWidth}${culprit(element)}`);
        const box = element.getBoundingClientRect();
        if (box.width > 0 && box.right > window.innerWidth + 1) found.push(`${selector}: right edge ${Math.round(box.right)} > ${window.innerWidth}`);
      }
    }
    const main = document.querySelector<HTMLElement>('.main-pane');
    if (main && main.getBoundingClientRect().width < 400) found.push(`.main-pane: only ${Math.round(main.getBoundingClientRect().width)} px wide`);
    const tabs = document.querySelector<HTMLElement>('.tabs');
    if (tabs && tabs.getBoundingClientRect().height > 100) found.push(`.tabs: ${Math.round(tabs.getBoundingClientRect().height)} px tall (more than two rows)`);
    for (const button of document.querySelectorAll<HTMLElement>('[data-testid="runs-open"], [data-testid="runs-delete"]')) {
      const box = button.getBoundingClientRect();
      const view = document.querySelector<HTMLElement>('.runs-view')!.getBoundingClientRect();
      if (box.right > view.right + 1 || box.left < view.left - 1) found.push(`${button.dataset.testid}: outside the Runs view (${Math.round(box.left)}–${Math.round(box.right)} of ${Math.round(view.left)}–${Math.round(view.right)})`);
    }
    return found;
  });
}

describe('layout', () => {
  test('fits 800, 1280 and 1920 px wide in every tab, normal and presenter, with a lesson and a run', { timeout: 300_000 }, async () => {
    const { context, page, pageErrors } = await openPage(browser(), `${appUrl}#lesson=2`);
    // Every model download fails with a 404: its message carries a long URL.
    await context.route('https://huggingface.co/**', (route) => route.fulfill({ status: 404, headers: { 'access-control-allow-origin': '*' }, body: 'Entry not found' }));
    await waitForEditor(page);
    await page.getByTestId('lesson-panel').waitFor();
    await page.getByTestId('policy-in-tab').click();
    await expect.poll(() => page.getByTestId('engine-status').textContent(), { timeout: 60_000 }).toMatch(/nano \(pretrained/);
    // ... and the picker selects it again, not the model that failed.
    await expect.poll(() => page.getByTestId('model-nano').getAttribute('aria-checked')).toBe('true');
    expect(await page.getByTestId('model-smollm2-135m-instruct').getAttribute('aria-checked')).toBe('false');
    await page.getByTestId('mode-warmup').click();
    await fillFields(page, { 'train-demonstrations': '4', 'train-sftSteps': '2', 'train-sftBatchSize': '2' });
    await page.getByTestId('start-training').click();
    expect(await jobOutcome(page, 120_000)).toMatch(/Warm-up finished/);
    await page.getByTestId('mode-evaluate').click();
    await fillFields(page, { 'setting-numTasks': '2', 'setting-rolloutsPerTask': '1', 'setting-maxTokens': '8' });
    await page.getByTestId('evaluate').click();
    await waitForSummary(page);
    await page.getByTestId('model-smollm2-135m-instruct').click();
    await page.getByRole('alert').filter({ hasText: 'huggingface.co' }).first().waitFor({ timeout: 60_000 });
    // A failed load brings back the model the engine held before: nano, the default, from the app's own files.
    await expect.poll(() => page.getByTestId('engine-status').textContent(), { timeout: 60_000 }).toMatch(/nano \(pretrained/);

    const tabs = ['editor', 'rollouts', 'training', 'runs', 'chat', 'studio'];
    for (const presenter of [false, true]) {
      if (presenter) await page.getByTestId('presenter-toggle').click();
      for (const [width, height] of [[800, 720], [1280, 720], [1920, 1080]] as const) {
        await page.setViewportSize({ width, height });
        for (const tab of tabs) {
          await page.getByTestId(`tab-${tab}`).click();
          await page.waitForTimeout(150); // charts size themselves on the next frame
          const where = `${width} px, ${presenter ? 'presenter' : 'normal'}, ${tab}`;
          if (tab === 'training' || tab === 'runs' || (tab === 'editor' && width === 800)) await screenshot(page, `layout-${width}-${presenter ? 'presenter' : 'normal'}-${tab}`);
          expect(await layoutProblems(page), where).toEqual([]);
        }
      }
    }
    expect(pageErrors).toEqual([]);
    await context.close();
  });
});
