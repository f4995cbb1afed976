/**
 * nano in real Chromium: it is a fresh page's in-tab model, loaded from the app's own files when the
 * in-tab policy is chosen (how long that takes is printed, not asserted); lesson 6's link and Start
 * lesson choose nano-wordle in the model picker, the engine loads the folder the app ships
 * (public/models/nano-wordle, no download), and an evaluation plays compact Wordle games with it, shown
 * turn by turn; one GRPO step with the game's turn rewards shows each move's score in the rollout
 * viewer, each glued to its move's last token even at 800 px. nano-2m, the larger shipped model, is
 * picked in the model picker (its parameters and size shown there), loads from the app's own files
 * with its parameter count in the policy card, and evaluates two reversals. Screenshots:
 * nano-default.png, nano-picker.png, nano-lesson-6.png, nano-lesson-6-turn-rewards.png,
 * nano-lesson-6-turn-rewards-800.png, nano-2m-picker.png, nano-2m-loaded.png, nano-2m-evaluated.png.
 */
import { describe, expect, inject, test } from 'vitest';
import { findShippedModel, shippedModelParameters } from '../../src/models/shipped-models.ts';
import { fillFields, jobOutcome, useBrowser, openPage, screenshot, waitForEditor, waitForSummary } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();

describe('nano', () => {
  test('a fresh page picks nano as its in-tab model and loads it from the app\'s files, with no other request', { timeout: 120_000 }, async () => {
    const { context, page, pageErrors } = await openPage(browser(), appUrl);
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

  test('lesson 6 selects nano-wordle, the engine loads the shipped folder, and it plays Wordle games', { timeout: 180_000 }, async () => {
    const { context, page, pageErrors } = await openPage(browser(), `${appUrl}#lesson=6`);
    const requested: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    await page.getByTestId('lesson-panel').waitFor();
    expect(await page.getByTestId('lesson-title').textContent()).toBe('Train a Wordle agent in this tab');
    await waitForEditor(page, 'Reverse a short text');
    await page.getByTestId('lesson-start').click();
    await expect.poll(() => page.getByTestId('lesson-note').textContent()).toMatch(/Opened "Lesson 6 · Wordle \(nano-wordle\)".*in-tab model \(nano-wordle\)/);
    await page.getByTestId('model-picker').waitFor();
    expect(await page.getByTestId('model-nano-wordle').getAttribute('aria-checked')).toBe('true');
    await expect.poll(() => page.getByTestId('engine-status').textContent(), { timeout: 60_000 }).toMatch(/nano-wordle \(pretrained, 0\.\d+M\)/);
    expect(requested.filter((url) => url.includes('/models/nano-wordle/')).map((url) => url.slice(url.lastIndexOf('/') + 1)).sort()).toEqual(['config.json', 'model.safetensors']);
    expect(requested.some((url) => !url.startsWith(appUrl.replace(/\/$/, '')) && !url.startsWith('blob:') && !url.startsWith('data:'))).toBe(false);
    await screenshot(page, 'nano-picker');

    // A short evaluation: 4 fresh games, greedy.
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

  test('nano-2m: picked in the model picker with its size, loads from the app\'s files with its parameter count, and evaluates', { timeout: 180_000 }, async () => {
    // tiny first, so the engine starts without fetching nano; the pick below loads nano-2m alone.
    const { context, page, pageErrors } = await openPage(browser(), appUrl, { inTabModel: 'tiny' });
    const requested: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    await waitForEditor(page);
    await page.getByTestId('policy-in-tab').click();
    await expect.poll(() => page.getByTestId('engine-status').textContent(), { timeout: 60_000 }).toMatch(/-parameter model over bytes/);
    const parameters = shippedModelParameters(findShippedModel('nano-2m')!);
    const millions = (parameters / 1e6).toFixed(2);
    expect(await page.getByTestId('model-detail-nano-2m').textContent()).toMatch(new RegExp(`^${millions}M parameters · .+ · ships with the app, 4\\.8 MB$`));
    await page.getByTestId('model-nano-2m').click();
    await expect.poll(() => page.getByTestId('engine-status').textContent(), { timeout: 90_000 }).toContain(`nano-2m (pretrained, ${millions}M)`);
    // "nano-2m (pretrained, 2.41M), 2,412,480 parameters (full fine-tuning), on …" (the count in the browser's locale)
    expect((await page.getByTestId('engine-status').textContent())!.replace(/[^\d]/g, '')).toContain(String(parameters));
    expect(await page.getByTestId('model-nano-2m').getAttribute('aria-checked')).toBe('true');
    expect(await page.evaluate(() => localStorage.getItem('tabrl.inTabModel'))).toBe('nano-2m');
    expect(requested.filter((url) => url.includes('/models/nano-2m/')).map((url) => url.slice(url.lastIndexOf('/') + 1)).sort()).toEqual(['config.json', 'model.safetensors']);
    expect(requested.some((url) => url.includes('/models/nano/'))).toBe(false);
    expect(requested.some((url) => !url.startsWith(appUrl.replace(/\/$/, '')) && !url.startsWith('blob:') && !url.startsWith('data:'))).toBe(false);
    await page.getByTestId('model-nano-2m').scrollIntoViewIfNeeded();
    await screenshot(page, 'nano-2m-picker');
    await page.getByTestId('engine-status').scrollIntoViewIfNeeded();
    await screenshot(page, 'nano-2m-loaded');

    // A short evaluation: two compact reversals, greedy.
    await page.getByTestId('setting-numTasks').fill('2');
    await page.getByTestId('evaluate').click();
    await waitForSummary(page, 120_000);
    expect(await page.getByTestId('summary').textContent()).toContain('rollouts · 2 tasks');
    await screenshot(page, 'nano-2m-evaluated');
    expect(pageErrors).toEqual([]);
    await context.close();
  });
});
