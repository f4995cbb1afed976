/**
 * The Studio tab's judge panel, red team and review queue end to end in Chromium, offline: a panel
 * of two scripted judge endpoints (answered here) on lesson 4, split rollouts flagged with the
 * panel's agreement and kappa; the red team finding lesson 4's gullible-judge back door with the
 * offline attacker and reviewer, turned into criteria; and the review queue, ranked, where a
 * confirmed hack becomes a criterion and a rejected edge-of-band task leaves the generated file.
 * Screenshots go to test-results/screenshots/.
 */
import type { Page, Route } from 'playwright';
import { describe, expect, inject, test } from 'vitest';
import { fillFields, useBrowser, openPage, screenshot, waitForEditor } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();

const POEM = 'Golden dreams whisper softly, gentle silver gleams glow in golden dreams and soft gentle whispers forever and ever in the golden night';

/** Answers an OpenAI-compatible request at `url` with `reply()`'s text (asked once per call: CORS preflights are answered without it). */
async function answer(page: Page, url: string, reply: () => string): Promise<void> {
  await page.route(url, (route: Route) =>
    route.request().method() === 'OPTIONS'
      ? route.fulfill({ status: 204, headers: { 'access-control-allow-origin': '*', 'access-control-allow-headers': '*', 'access-control-allow-methods': 'POST, OPTIONS' } })
      : route.fulfill({
          status: 200,
          headers: { 'content-type': 'application/json', 'access-control-allow-origin': '*' },
          body: JSON.stringify({ id: 'x', object: 'chat.completion', model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: reply() }, finish_reason: 'stop' }] }),
        }),
  );
}

async function openLesson4(page: Page): Promise<void> {
  await page.getByTestId('lesson-picker').selectOption('4');
  await page.getByTestId('lesson-start').click();
  await waitForEditor(page, 'Lesson 4: a judge that can be fooled');
}

async function openStudio(page: Page, section: string): Promise<void> {
  await page.getByTestId('tab-studio').click();
  await page.getByTestId(`studio-section-${section}`).click();
}

describe('studio: judges at scale', () => {
  test('a judge panel of two scripted endpoints: votes per rollout, split rollouts flagged, pairwise agreement and kappa', async () => {
    const { context, page, pageErrors } = await openPage(browser(), appUrl);
    await waitForEditor(page);
    await openLesson4(page);
    await answer(page, 'http://policy.invalid/v1/chat/completions', () => POEM);
    // Judge A says 9 every time; judge B alternates 9 and 2 (one call at a time, so calls 2 and 4 split); later, B answers off the 0–10 scale.
    let judgeBCalls = 0;
    let judgeBOffScale = false;
    await answer(page, 'http://judge-a.invalid/v1/chat/completions', () => 'Score: 9');
    await answer(page, 'http://judge-b.invalid/v1/chat/completions', () => (judgeBOffScale ? 'Score: 15' : ++judgeBCalls % 2 === 1 ? 'Score: 9' : 'Score: 2'));
    await page.getByTestId('policy-endpoint').click();
    await page.locator('input[placeholder="http://localhost:8000/v1"]').first().fill('http://policy.invalid/v1');
    await fillFields(page, { 'setting-numTasks': '4', 'setting-rolloutsPerTask': '1', 'setting-concurrency': '1' });
    await openStudio(page, 'panel');
    // The default first judge is the Judge card's, which is on the offline heuristic: refused with what to do.
    await page.getByTestId('panel-start').click();
    await expect.poll(() => page.getByTestId('panel-error').textContent()).toContain("the offline heuristic: it lends no model");
    await page.getByTestId('panel-judge-source').first().selectOption('endpoint');
    await page.getByTestId('panel-judge-url').nth(0).fill('http://judge-a.invalid/v1');
    await page.getByTestId('panel-judge-model').nth(0).fill('judge-a');
    await page.getByTestId('panel-judge-url').nth(1).fill('http://judge-b.invalid/v1');
    await page.getByTestId('panel-judge-model').nth(1).fill('judge-b');
    await page.getByTestId('panel-aggregation-mean').click();
    await page.getByTestId('panel-start').click();
    await expect.poll(() => page.getByTestId('panel-rollout').count(), { timeout: 30_000 }).toBe(4);
    await expect.poll(() => page.getByTestId('panel-start').count(), { timeout: 30_000 }).toBe(1);
    expect(await page.getByTestId('panel-error').count()).toBe(0);
    // 2 of 4 calls split: pairwise (1 + 0 + 1 + 0) / 4 = 0.5; yes share 6/8, chance 0.625, kappa (0.5 − 0.625) / 0.375 = −0.333.
    expect(await page.getByTestId('panel-pairwise').textContent()).toBe('pairwise agreement 0.500');
    expect(await page.getByTestId('panel-kappa').textContent()).toBe("Fleiss' kappa -0.333");
    expect(await page.getByTestId('panel-split').textContent()).toBe('split on 2');
    expect(await page.getByTestId('panel-off-scale').textContent()).toBe('0 replies off the scale');
    expect(await page.locator('[data-testid="panel-rollout"][data-split="true"]').count()).toBe(2);
    expect(await page.locator('[data-testid="panel-rollout"][data-split="true"] [data-testid="panel-rollout-agreement"]').allTextContents()).toEqual(['0.000', '0.000']);
    // The mean of 0.9 and 0.2 on a split rollout.
    expect(await page.locator('[data-testid="panel-rollout"][data-split="true"] td:nth-child(2)').first().textContent()).toBe('0.55');
    await page.getByTestId('panel-summary').scrollIntoViewIfNeeded();
    await screenshot(page, 'studio-judge-panel');
    await page.setViewportSize({ width: 800, height: 720 });
    await screenshot(page, 'studio-judge-panel-800');
    await page.setViewportSize({ width: 1280, height: 720 });
    // The split rollouts join the review queue.
    await openStudio(page, 'review');
    await page.getByTestId('review-build').click();
    expect(await page.locator('[data-testid="review-item"][data-kind="judges-split"]').count()).toBe(2);
    // Judge B now answers "Score: 15" on a 0–10 scale: each of its replies is counted off the scale, next to the agreement, and left out of the vote.
    judgeBOffScale = true;
    await openStudio(page, 'panel');
    await page.getByTestId('panel-start').click();
    await expect.poll(() => page.getByTestId('panel-off-scale').textContent(), { timeout: 30_000 }).toBe('4 replies off the scale');
    await expect.poll(() => page.getByTestId('panel-start').count(), { timeout: 30_000 }).toBe(1);
    expect(await page.getByTestId('panel-off-scale').getAttribute('class')).toContain('chip-bad');
    // Judge A's 9 alone scores each rollout; with one vote per call there is no pair to agree or split.
    expect(await page.locator('[data-testid="panel-rollout"] td:nth-child(2)').allTextContents()).toEqual(['0.90', '0.90', '0.90', '0.90']);
    expect(await page.getByTestId('panel-split').textContent()).toBe('split on 0');
    await page.getByTestId('panel-summary').scrollIntoViewIfNeeded();
    await screenshot(page, 'studio-judge-panel-off-scale');
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  test("the red team finds lesson 4's back door; the review queue ranks it first, and confirming it gates the reward with criteria", async () => {
    const { context, page, pageErrors } = await openPage(browser(), appUrl);
    await waitForEditor(page);
    await openLesson4(page);
    await openStudio(page, 'redteam');
    await page.getByTestId('redteam-start').click();
    await page.getByTestId('redteam-summary').waitFor({ timeout: 60_000 });
    expect(await page.getByTestId('redteam-summary').textContent()).toContain('calls: attacker 22, scoring 22');
    const doors = page.getByTestId('redteam-backdoor');
    const doorCount = await doors.count();
    expect(doorCount).toBeGreaterThan(0);
    const first = (await doors.first().textContent()) ?? '';
    expect(first).toContain('judgeReward');
    expect(first).toContain('not earned');
    await screenshot(page, 'studio-red-team');
    await page.setViewportSize({ width: 800, height: 720 });
    await screenshot(page, 'studio-red-team-800');
    await page.setViewportSize({ width: 1280, height: 720 });
    // The queue: the back doors first.
    await openStudio(page, 'review');
    await page.getByTestId('review-build').click();
    const kinds = await page.getByTestId('review-item').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-kind')));
    expect(kinds.length).toBe(doorCount);
    expect(kinds.every((kind) => kind === 'back-door')).toBe(true);
    await page.getByTestId('review-accept').first().click();
    await expect.poll(() => page.getByTestId('review-note').textContent(), { timeout: 30_000 }).toContain('Opened "Lesson 4 · gullible judge + criteria"');
    expect(await page.locator('[data-testid="review-item"]').first().getAttribute('data-status')).toBe('accepted');
    await screenshot(page, 'studio-review-hack');
    await expect.poll(() => page.getByTestId('environment-picker').locator('option:checked').textContent()).toBe('Lesson 4 · gullible judge + criteria');
    // The red team's own "Turn into criteria" opens the same kind of file.
    await openStudio(page, 'redteam');
    await page.getByTestId('redteam-criteria').click();
    await waitForEditor(page, 'gateByCriteria');
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  test('a learnable task at the edge of the band, rejected in the queue, leaves the generated file', async () => {
    const { context, page, pageErrors } = await openPage(browser(), appUrl);
    await waitForEditor(page);
    await openStudio(page, 'documents');
    await page.getByTestId('document-add-sample').click();
    await page.getByTestId('synthesis-start').click();
    await page.getByTestId('synthesis-report').waitFor({ timeout: 30_000 });
    await page.getByTestId('synthesis-open').click();
    await waitForEditor(page, 'closed-book questions');
    await openStudio(page, 'calibrate');
    await page.getByTestId('calibration-policy').selectOption('student');
    await fillFields(page, { 'calibration-tasks': '50', 'calibration-k': '4', 'keep-lo': '0.2', 'keep-hi': '0.8' });
    await page.getByTestId('calibration-start').click();
    await page.getByTestId('calibration-histogram').waitFor({ timeout: 60_000 });
    await openStudio(page, 'review');
    await page.getByTestId('review-build').click();
    const edge = page.locator('[data-testid="review-item"][data-kind="edge-of-band"]');
    expect(await edge.count()).toBeGreaterThan(0);
    const question = ((await edge.first().locator('td').nth(2).textContent()) ?? '').trim();
    expect(question.length).toBeGreaterThan(10);
    await edge.first().getByTestId('review-reject').click();
    await expect.poll(() => page.getByTestId('review-note').textContent()).toContain('opened "studio-tasks (reviewed)" without it');
    expect(await edge.first().getAttribute('data-status')).toBe('rejected');
    await screenshot(page, 'studio-review-task');
    await expect.poll(() => page.getByTestId('environment-picker').locator('option:checked').textContent()).toBe('studio-tasks (reviewed)');
    await page.getByTestId('tab-editor').click();
    await waitForEditor(page, 'closed-book questions');
    expect(await page.locator('.monaco-editor').first().textContent()).not.toContain(question.slice(0, 30));
    expect(pageErrors).toEqual([]);
    await context.close();
  });
});
