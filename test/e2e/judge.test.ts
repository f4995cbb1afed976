/**
 * The Judge card end to end in Chromium: judged-writing, evaluated by its scripted expert, is
 * graded by a judge endpoint the person picks (intercepted here). The judge's calls come out of the
 * sandbox to the page, carry the judge's own key, and set the reward; a judge that answers 401
 * stops the run with a message naming the judge, rather than scoring 0.
 */
import type { Page, Route } from 'playwright';
import { describe, expect, inject, test } from 'vitest';
import { fillFields, useBrowser, openPage, screenshot, waitForEditor, waitForSummary } from './browser.ts';

const appUrl = inject('appUrl');
const JUDGE_URL = 'http://judge.invalid/v1';
const browser = useBrowser();

/** Opens judged-writing with three tasks and the endpoint judge `judge-e2e` with key `sk-e2e-judge`. */
async function judgedWritingWithEndpointJudge(page: Page): Promise<void> {
  await waitForEditor(page);
  await page.getByTestId('new-from-builtin').selectOption('judged-writing');
  await waitForEditor(page, 'A short creative-writing task');
  await fillFields(page, { 'setting-numTasks': '3', 'setting-rolloutsPerTask': '1' });
  await page.getByTestId('judge-endpoint').click();
  await fillFields(page, { 'judge-base-url': JUDGE_URL, 'judge-model': 'judge-e2e', 'judge-api-key': 'sk-e2e-judge' });
}

describe('judge card', () => {
  test('an endpoint judge grades judged-writing from outside the sandbox, with its own key', async () => {
    const { context, page, pageErrors } = await openPage(browser(), appUrl);
    const seen: { authorization?: string; model: string; prompt: string }[] = [];
    await page.route(`${JUDGE_URL}/chat/completions`, async (route: Route) => {
      const body = route.request().postDataJSON() as { model: string; messages: { content: string }[] };
      seen.push({ authorization: route.request().headers().authorization, model: body.model, prompt: body.messages.at(-1)!.content });
      await route.fulfill({
        status: 200,
        headers: { 'content-type': 'application/json', 'access-control-allow-origin': '*' },
        body: JSON.stringify({ id: 'j', object: 'chat.completion', model: body.model, choices: [{ index: 0, message: { role: 'assistant', content: 'Score: 9' }, finish_reason: 'stop' }] }),
      });
    });
    await judgedWritingWithEndpointJudge(page);
    await screenshot(page, 'judge-card');
    await page.getByTestId('evaluate').click();
    await waitForSummary(page);
    // The heuristic stand-in would give the expert's poems 1.0; the lent judge says 9/10.
    expect(await page.getByTestId('reward-mean').textContent()).toMatch(/^0\.900/);
    expect(seen).toHaveLength(3);
    expect(seen.every((call) => call.authorization === 'Bearer sk-e2e-judge' && call.model === 'judge-e2e')).toBe(true);
    expect(seen[0]!.prompt).toContain('You are grading a short poem.');
    // The choice survives a reload; the key is stored, not shown.
    await page.reload();
    await waitForEditor(page, 'A short creative-writing task');
    expect(await page.getByTestId('judge-endpoint').getAttribute('aria-checked')).toBe('true');
    expect(await page.getByTestId('judge-model').inputValue()).toBe('judge-e2e');
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  test('a judge that answers 401 stops the run with a message naming the judge, not a reward of 0', async () => {
    const { context, page } = await openPage(browser(), appUrl);
    await page.route(`${JUDGE_URL}/chat/completions`, (route: Route) => route.fulfill({
      status: 401,
      headers: { 'content-type': 'application/json', 'access-control-allow-origin': '*' },
      body: JSON.stringify({ error: { message: 'invalid judge key' } }),
    }));
    await judgedWritingWithEndpointJudge(page);
    await page.getByTestId('evaluate').click();
    const failure = page.getByTestId('run-failure');
    await failure.waitFor({ timeout: 60_000 });
    const text = (await failure.textContent()) ?? '';
    expect(text).toContain(`The judge (endpoint judge-e2e at ${JUDGE_URL}) failed`);
    expect(text).toMatch(/401/);
    expect(text).toContain('The run stopped');
    await screenshot(page, 'judge-failure');
    await context.close();
  });
});
