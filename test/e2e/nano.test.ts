/**
 * nano in real Chromium: it is a fresh page's in-tab model, loaded from the app's own files when the
 * in-tab policy is chosen (how long that takes is printed, not asserted); lesson 6's link and Start
 * lesson choose nano in the model picker, the engine loads the folder the app ships
 * (public/models/nano, no download), and an evaluation plays compact Wordle games with it, shown
 * turn by turn; one GRPO step with the game's turn rewards shows each move's score in the rollout
 * viewer, each glued to its move's last token even at 800 px. Screenshots: nano-default.png, nano-picker.png,
 * nano-lesson-6.png, nano-lesson-6-turn-rewards.png, nano-lesson-6-turn-rewards-800.png.
 */
import type { Browser } from 'playwright';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { fillFields, jobOutcome, launchBrowser, openPage, screenshot, waitForEditor, waitForSummary } from './browser.ts';

const appUrl = inject('appUrl');
let browser: Browser;

beforeAll(async () => {
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
});

describe('nano', () => {
  test('a fresh page picks nano as its in-tab model and loads it from the app\'s files, with no other request', { timeout: 120_000 }, async () => {
    const { context, page, pageErrors } = await openPage(browser, appUrl);
    const requested: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    await waitForEditor(page);
    const chosen = Date.now();
    await page.getByTestId('policy-in-tab').click();
    expect(await page.getByTestId('model-nano').getAttribute('aria-checked')).toBe('true');
    await expect.poll(() => page.getByTestId('engine-status').textContent(), { timeout: 60_000 }).toMatch(/nano \(pretrained, 0\.\d+M\)/);
    console.log(`nano ready ${Date.now() - chosen} ms after choosing the in-tab policy (BENCHMARKS.md compares it with tiny)`);
    expect(requested.filter((url) => url.includes('/models/nano/')).length).toBeGreaterThan(0);
    expect(requested.some((url) => !url.startsWith(appUrl.replace(/\/$/, '')) && !url.startsWith('blob:') && !url.startsWith('data:'))).toBe(false);
    await screenshot(page, 'nano-default');
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  test('lesson 6 selects nano, the engine loads the shipped folder, and it plays Wordle games', { timeout: 180_000 }, async () => {
    const { context, page, pageErrors } = await openPage(browser, `${appUrl}#lesson=6`);
    const requested: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    await page.getByTestId('lesson-panel').waitFor();
    expect(await page.getByTestId('lesson-title').textContent()).toBe('Train a Wordle agent in this tab');
    await waitForEditor(page, 'Reverse a short text');
    await page.getByTestId('lesson-start').click();
    await expect.poll(() => page.getByTestId('lesson-note').textContent()).toMatch(/Opened "Lesson 6 · Wordle \(nano\)".*in-tab model \(nano\)/);
    await page.getByTestId('model-picker').waitFor();
    expect(await page.getByTestId('model-nano').getAttribute('aria-checked')).toBe('true');
    await expect.poll(() => page.getByTestId('engine-status').textContent(), { timeout: 60_000 }).toMatch(/nano \(pretrained, 0\.\d+M\)/);
    expect(requested.filter((url) => url.includes('/models/nano/')).map((url) => url.slice(url.lastIndexOf('/') + 1)).sort()).toEqual(['config.json', 'model.safetensors']);
    expect(requested.some((url) => !url.startsWith(appUrl.replace(/\/$/, '')) && !url.startsWith('blob:') && !url.startsWith('data:'))).toBe(false);
    await screenshot(page, 'nano-picker');

    // A short evaluation: 4 held-out words, greedy.
    await page.getByTestId('setting-numTasks').fill('4');
    await page.getByTestId('evaluate').click();
    await waitForSummary(page, 120_000);
    await page.getByTestId('tab-rollouts').click();
    await expect.poll(() => page.locator('body').textContent()).toContain('????? + -');
    await screenshot(page, 'nano-lesson-6');

    // One GRPO step with the game's turn rewards on: the rollout viewer shows each move's score next to its board.
    const args = JSON.parse(await page.getByTestId('setting-args').inputValue()) as Record<string, unknown>;
    await page.getByTestId('setting-args').fill(JSON.stringify({ ...args, turnRewards: true }));
    await page.getByTestId('mode-train').click();
    await fillFields(page, { 'train-grpoSteps': '1', 'train-tasksPerStep': '1', 'train-groupSize': '2', 'train-maxTokens': '8' });
    await page.getByTestId('start-training').click();
    expect(await jobOutcome(page, 150_000)).toMatch(/Training finished/);
    expect(await page.getByTestId('training-rollout').count()).toBe(2);
    const perMove = await page.getByTestId('training-rollout').first().getByTestId('turn-reward').allTextContents();
    expect(perMove.length).toBeGreaterThan(0);
    // Each move scores 0 (not a word), 0.20 (a word that ignores the board) or 0.50 (a word that fits it).
    for (const score of perMove) expect(['0.00', '0.20', '0.50']).toContain(score);
    expect(await page.getByTestId('training-rollouts').textContent()).toContain('fitsBoardTurnReward');
    await page.getByTestId('training-rollouts').scrollIntoViewIfNeeded();
    await screenshot(page, 'nano-lesson-6-turn-rewards');
    await page.setViewportSize({ width: 800, height: 720 });
    await page.getByTestId('training-rollouts').scrollIntoViewIfNeeded();
    await screenshot(page, 'nano-lesson-6-turn-rewards-800');
    // At 800 px the moves wrap, but each score stays on the line of its move's last token (never alone at the start of the next line).
    const offsets = await page.getByTestId('turn-reward').evaluateAll((chips) =>
      chips.map((chip) => {
        const token = chip.previousElementSibling;
        if (token?.getAttribute('data-testid') !== 'token') return Number.NaN;
        const [a, b] = [chip.getBoundingClientRect(), token.getBoundingClientRect()];
        return Math.abs(a.top - b.top) + Math.abs(a.left - b.right);
      }),
    );
    expect(offsets.length).toBeGreaterThan(0);
    for (const offset of offsets) expect(offset).toBeLessThan(4);
    expect(pageErrors).toEqual([]);
    await context.close();
  });
});
