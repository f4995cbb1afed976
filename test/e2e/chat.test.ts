/**
 * The Chat tab and pausing, end to end in real Chromium (WebGPU on SwiftShader here): before any
 * training the tab says there is no trained model; after a short warm-up of the tiny model one
 * message gets two different answers, from the base (its initial weights) and the trained model,
 * in two columns, and a second message continues both conversations; a GRPO job paused mid-run
 * holds its step counter for seconds, shows "paused", and finishes after Resume.
 */
import type { Page } from 'playwright';
import { describe, expect, inject, test } from 'vitest';
import { fillFields, jobOutcome, useBrowser, openPage, screenshot, waitForEditor } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();

/** Sends a chat message and returns the two answers once both are in. */
async function chat(page: Page, text: string, turn: number): Promise<{ base: string; trained: string }> {
  await page.getByTestId('chat-input').fill(text);
  await page.getByTestId('chat-send').click();
  const answer = (column: string) => page.getByTestId(`chat-answer-${column}`).nth(turn);
  await expect.poll(async () => [await answer('base').getAttribute('data-status'), await answer('trained').getAttribute('data-status')], { timeout: 60_000 }).toEqual(['done', 'done']);
  return { base: (await answer('base').locator('.message-content').textContent()) ?? '', trained: (await answer('trained').locator('.message-content').textContent()) ?? '' };
}

describe('chat and pause', () => {
  test('the chat answers with the base and the trained model side by side; a paused GRPO job holds and then finishes', { timeout: 300_000 }, async () => {
    const { context, page, pageErrors } = await openPage(browser(), appUrl, { inTabModel: 'tiny' });
    await waitForEditor(page);
    await page.getByTestId('tab-chat').click();
    expect(await page.getByTestId('chat-no-run').textContent()).toMatch(/no trained model yet/);
    await expect.poll(() => page.getByTestId('chat-send').isDisabled()).toBe(true);

    await page.getByTestId('policy-in-tab').click();
    await page.getByTestId('mode-warmup').click();
    await fillFields(page, { 'train-demonstrations': '8', 'train-sftSteps': '6', 'train-sftBatchSize': '4' });
    await page.getByTestId('start-training').click();
    expect(await jobOutcome(page, 150_000)).toMatch(/Warm-up finished/);

    await page.getByTestId('tab-chat').click();
    await expect.poll(() => page.getByTestId('chat-column-trained').locator('h3').textContent()).toMatch(/^trained — reverse-text · 6 SFT \+ 0 GRPO steps/);
    expect(await page.getByTestId('chat-column-base').locator('h3').textContent()).toBe('base');
    await fillFields(page, { 'chat-max-tokens': '12' });
    const first = await chat(page, 'hello', 0);
    expect(first.base).not.toBe(first.trained);
    // Greedy: the same message to the same weights gets the same answer; each column keeps its own history.
    const second = await chat(page, 'hello', 1);
    expect(await page.getByTestId('chat-answer-trained').count()).toBe(2);
    expect(second.base.length + second.trained.length).toBeGreaterThan(0);
    await screenshot(page, 'chat');

    // Pause a GRPO job mid-run: the step counter stops, the progress says paused; Resume lets it finish.
    await page.getByTestId('mode-train').click();
    await fillFields(page, { 'train-grpoSteps': '4', 'train-tasksPerStep': '2', 'train-groupSize': '4', 'train-maxTokens': '8' });
    await page.getByTestId('start-training').click();
    await expect.poll(() => page.getByTestId('training-progress').textContent(), { timeout: 60_000 }).toMatch(/GRPO: [1-3] \/ 4 steps/);
    await page.getByTestId('pause-training').click();
    await expect.poll(() => page.getByTestId('training-eta').textContent()).toMatch(/^paused/);
    // Steps already under way may still report; then the counter holds.
    await page.waitForTimeout(1500);
    const held = await page.getByTestId('training-progress').textContent();
    await page.waitForTimeout(3000);
    expect(await page.getByTestId('training-progress').textContent()).toBe(held);
    const heldStep = Number(held?.match(/GRPO: (\d+) \/ 4/)?.[1]);
    expect(heldStep).toBeLessThan(4);
    await screenshot(page, 'pause');
    await page.getByTestId('resume-training').click();
    expect(await jobOutcome(page, 150_000)).toMatch(/Training finished/);
    await page.getByTestId('tab-training').click();
    await expect.poll(() => page.getByTestId('run-grpo-steps').textContent()).toBe('4 GRPO steps');
    expect(pageErrors).toEqual([]);
    await context.close();
  });
});
