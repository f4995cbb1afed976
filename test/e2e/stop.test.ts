/**
 * Stop in every phase of a job, end to end in Chromium, with an environment whose top-level code
 * never returns (so loading never ends by itself): Stop during loading ends an evaluation and a
 * GRPO job at once, with a message saying so; left alone, loading is stopped at the time limit the
 * message states (the sandbox's start-up is not counted in it).
 */
import type { Browser } from 'playwright';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { fillFields, jobOutcome, launchBrowser, openPage, screenshot, shareLink, waitForEditor } from './browser.ts';

const appUrl = inject('appUrl');
let browser: Browser;

/** An environment file whose module body spins forever. */
const SPINNING_SOURCE = [
  "import { SingleTurnEnv, Rubric } from 'tabrl';",
  '',
  '// Top-level code that never returns: loading this file never ends by itself.',
  'for (;;) { /* spin */ }',
  '',
  'export default function loadEnvironment() {',
  "  return new SingleTurnEnv({ name: 'never', dataset: [{ question: 'Reverse this text: loop' }], rubric: new Rubric() });",
  '}',
].join('\n');

beforeAll(async () => {
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
});

describe('Stop', () => {
  test('during environment loading stops an evaluation at once; left alone, loading stops at the stated limit', { timeout: 120_000 }, async () => {
    const { context, page, pageErrors } = await openPage(browser, shareLink(appUrl, SPINNING_SOURCE, { name: 'never', timeLimitMs: 3000 }));
    await page.getByTestId('review-run').click();
    await page.getByTestId('stop').waitFor();
    await expect.poll(() => page.locator('iframe[data-testid="sandbox-frame"]').count(), { timeout: 20_000 }).toBe(1);
    const stopped = Date.now();
    await page.getByTestId('stop').click();
    const failure = page.getByTestId('run-failure');
    await failure.waitFor({ timeout: 2_000 });
    expect(Date.now() - stopped).toBeLessThan(2_000);
    expect(await failure.textContent()).toMatch(/Stopped while the environment "never \(shared\)" was loading; the sandbox was shut down and nothing ran/);
    expect(await page.locator('iframe[data-testid="sandbox-frame"]').count()).toBe(0);
    await screenshot(page, 'stop-while-loading');

    // Left alone: the limit counts from when the sandbox answered, and the message states it.
    await page.getByTestId('evaluate').click();
    await expect.poll(() => page.locator('iframe[data-testid="sandbox-frame"]').count(), { timeout: 20_000 }).toBe(1);
    const started = Date.now();
    await failure.waitFor({ timeout: 20_000 });
    const waited = Date.now() - started;
    expect(await failure.textContent()).toMatch(/Environment "never \(shared\)" was stopped: loading the environment ran for more than 3\.0 s without returning/);
    // Before, start-up's 10 s grace was silently added (13 s and more for a stated 3 s).
    expect(waited).toBeGreaterThanOrEqual(2_500);
    expect(waited).toBeLessThan(9_000);
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  test('during environment loading stops a GRPO job at once, with the run panel saying so', { timeout: 180_000 }, async () => {
    const { context, page, pageErrors } = await openPage(browser, shareLink(appUrl, SPINNING_SOURCE, { name: 'never', timeLimitMs: 60_000 }), { inTabModel: 'tiny' });
    await page.getByTestId('review-load').click();
    await waitForEditor(page, 'spin');
    await page.getByTestId('policy-in-tab').click();
    await expect.poll(() => page.getByTestId('engine-status').textContent(), { timeout: 60_000 }).toMatch(/parameter model over bytes/);
    await page.getByTestId('mode-train').click();
    await fillFields(page, { 'train-grpoSteps': '2', 'train-tasksPerStep': '1', 'train-groupSize': '2' });
    await page.getByTestId('start-training').click();
    await expect.poll(() => page.locator('iframe[data-testid="sandbox-frame"]').count(), { timeout: 30_000 }).toBe(1);
    await page.getByTestId('stop-training').click();
    expect(await jobOutcome(page, 3_000)).toBe('Training stopped. The environment "never (shared)" was still loading: the sandbox was shut down and nothing ran.');
    expect(await page.locator('iframe[data-testid="sandbox-frame"]').count()).toBe(0);
    expect(pageErrors).toEqual([]);
    await context.close();
  });
});
