/**
 * The playground end to end in real Chromium: open it, see a diagnostic, evaluate a built-in with
 * its expert, round-trip a share link, stop an infinite loop, and check that environment code can
 * neither read the app's stored API key nor reach the network. Screenshots of each screen are
 * written to test-results/screenshots/.
 */
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright';
import { describe, expect, inject, test } from 'vitest';
import { decodeShareHash } from '../../src/ui/features/share/url-state.ts';
import { useBrowser, openPage, screenshot, shareLink, waitForEditor, waitForSummary } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();

async function evaluateAndWait(page: Page): Promise<void> {
  await page.getByTestId('evaluate').click();
  await waitForSummary(page);
}

describe('playground', () => {
  test('opens with the title, a built-in environment in the editor and the run panel', async () => {
    const { context, page, pageErrors } = await openPage(browser(), appUrl);
    await expect.poll(() => page.title()).toBe('TabRL');
    await waitForEditor(page);
    await expect.poll(() => page.getByTestId('environment-picker').locator('option').allTextContents()).toContain('reverse-text');
    await expect.poll(() => page.getByTestId('problems').textContent(), { timeout: 20_000 }).toBe('No problems');
    // A first visit says what the page is for, once.
    expect(await page.getByTestId('first-visit-hint').textContent()).toMatch(/TabRL trains language-model agents in this browser tab\..*Lesson 1/);
    await screenshot(page, '01-app');
    // The policy choice is a radio group: arrow keys move the choice, only the chosen option is in the Tab order.
    const checked = () => page.locator('[aria-label="Policy"] [aria-checked="true"]').getAttribute('data-testid');
    expect(await checked()).toBe('policy-expert');
    expect(await page.getByTestId('policy-endpoint').getAttribute('tabindex')).toBe('-1');
    await page.getByTestId('policy-expert').focus();
    await page.keyboard.press('ArrowRight');
    expect(await checked()).toBe('policy-endpoint');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe('policy-endpoint');
    await page.keyboard.press('ArrowLeft');
    expect(await checked()).toBe('policy-expert');
    // The views are a tab list that arrow keys walk the same way.
    await page.getByTestId('tab-editor').focus();
    await page.keyboard.press('End');
    expect(await page.getByTestId('tab-studio').getAttribute('aria-selected')).toBe('true');
    await page.getByTestId('studio-view').waitFor();
    await page.keyboard.press('ArrowRight');
    expect(await page.getByTestId('tab-editor').getAttribute('aria-selected')).toBe('true');
    await page.getByTestId('first-visit-dismiss').click();
    expect(await page.getByTestId('first-visit-hint').count()).toBe(0);
    await page.reload();
    await waitForEditor(page);
    expect(await page.getByTestId('first-visit-hint').count()).toBe(0);
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  test('an edit with a type error shows a diagnostic inline, and Evaluate refuses to run it', async () => {
    const { context, page } = await openPage(browser(), appUrl);
    await waitForEditor(page);
    await page.locator('.monaco-editor .view-lines').first().click();
    await page.keyboard.press('Control+End');
    await page.keyboard.press('Enter');
    await page.keyboard.type('const broken: number = "not a number";');
    await expect.poll(() => page.getByTestId('problems').textContent(), { timeout: 20_000 }).toContain("Type 'string' is not assignable to type 'number'");
    await page.locator('.monaco-editor .squiggly-error').first().waitFor();
    // Completion knows the tabrl API.
    await page.keyboard.press('Enter');
    await page.keyboard.type('new SingleTurnE');
    await page.keyboard.press('Control+Space');
    await page.locator('.monaco-editor .suggest-widget').getByText('SingleTurnEnv').first().waitFor({ timeout: 20_000 });
    await screenshot(page, '02-diagnostic');
    await page.keyboard.press('Escape');
    await page.getByTestId('evaluate').click();
    await expect.poll(() => page.getByTestId('run-failure').textContent()).toMatch(/compile error/);
    await context.close();
  });

  test('evaluates a built-in with its scripted expert: summary, rollout viewer and JSONL export', async () => {
    const { context, page, pageErrors } = await openPage(browser(), appUrl);
    await waitForEditor(page);
    await evaluateAndWait(page);
    await expect.poll(() => page.getByTestId('pass-rate').textContent()).toBe('100.0%');
    expect(await page.getByTestId('reward-mean').textContent()).toMatch(/^1\.200/);
    expect(await page.getByTestId('error-count').textContent()).toMatch(/^0 with errors/);
    await screenshot(page, '03-summary');

    await page.getByTestId('show-rollouts').click();
    expect(await page.getByTestId('rollout-item').count()).toBe(20);
    await page.getByTestId('rollout-item').nth(3).click();
    const detail = page.getByTestId('rollout-detail');
    await expect.poll(() => detail.textContent()).toContain('Reverse this text:');
    expect(await detail.textContent()).toContain('<reversed>');
    expect(await detail.textContent()).toContain('lcsReward');
    await screenshot(page, '04-rollouts');

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export').click()]);
    const lines = readFileSync((await download.path())!, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(20);
    // The lines tabrl eval writes to results.jsonl (src/envs/results-record.ts).
    const first = JSON.parse(lines[0]!) as { task_index: number; reward: number; scores: Record<string, number> };
    expect(first.task_index).toBe(0);
    expect(first.scores).toHaveProperty('lcsReward', 1);
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  test('a share link round-trips: a fresh page shows the code for review and runs it only after consent', async () => {
    const first = await openPage(browser(), appUrl);
    await waitForEditor(first.page);
    await first.page.getByTestId('setting-seed').fill('42');
    await first.page.getByTestId('setting-numTasks').fill('3');
    await first.page.getByTestId('share').click();
    await expect.poll(() => first.page.url()).toContain('#v=1');
    const link = first.page.url();
    const decoded = decodeShareHash(new URL(link).hash);
    expect(decoded).toMatchObject({ evaluation: { seed: 42, numTasks: 3 }, name: 'reverse-text', builtin: 'reverse-text', policy: 'expert' });
    expect(decoded.source).toContain("from 'tabrl'");
    expect(link).not.toContain('apiKey');
    await first.context.close();

    const second = await openPage(browser(), 'about:blank');
    const frameRequests: string[] = [];
    second.page.on('request', (request) => { if (request.url().includes('/sandbox/')) frameRequests.push(request.url()); });
    await second.page.goto(link);
    const review = second.page.getByTestId('review');
    await review.waitFor();
    await expect.poll(() => second.page.getByTestId('review-code').textContent()).toContain('export default function loadEnvironment');
    await second.page.waitForTimeout(500);
    expect(frameRequests, 'nothing runs before consent').toEqual([]);
    await screenshot(second.page, '05-share-review');

    await second.page.getByTestId('review-run').click();
    await waitForSummary(second.page);
    expect(frameRequests.length).toBeGreaterThan(0);
    expect(await second.page.getByTestId('setting-seed').inputValue()).toBe('42');
    await expect.poll(() => second.page.getByTestId('summary').textContent()).toContain('3 tasks');
    await second.context.close();
  });

  test('a link that points the policy and judge endpoints elsewhere keeps the stored keys\' endpoints unless the person ticks the box', async () => {
    const { context, page, pageErrors } = await openPage(browser(), 'about:blank');
    // This person has both endpoints set up, with keys stored.
    await context.addInitScript(() => {
      if (window !== window.top || location.protocol === 'about:' || localStorage.getItem('tabrl.endpoint.apiKey') !== null) return;
      localStorage.setItem('tabrl.policy', JSON.stringify({ baseURL: 'https://api.mine.example/v1', model: 'mine' }));
      localStorage.setItem('tabrl.endpoint.apiKey', 'sk-mine');
      localStorage.setItem('tabrl.judge', JSON.stringify({ kind: 'heuristic', baseURL: 'https://judge.mine.example/v1', model: 'judge-mine' }));
      localStorage.setItem('tabrl.judge.apiKey', 'jk-mine');
    });
    const source = "import { SingleTurnEnv, Rubric } from 'tabrl';\nexport default function loadEnvironment() {\n  return new SingleTurnEnv({ name: 'elsewhere', dataset: [{ question: 'hi' }], rubric: new Rubric() });\n}\n";
    const link = shareLink(appUrl, source, { name: 'elsewhere', policy: 'endpoint', baseURL: 'https://evil.example/v1', model: 'evil', judgeKind: 'endpoint', judgeBaseURL: 'https://evil.example/judge', judgeModel: 'evil-judge' });

    await page.goto(link);
    const warning = page.getByTestId('review-endpoints');
    await warning.waitFor();
    for (const url of ['https://evil.example/v1', 'https://api.mine.example/v1', 'https://evil.example/judge', 'https://judge.mine.example/v1']) expect(await warning.textContent()).toContain(url);
    await screenshot(page, '05-share-review-endpoints');
    await page.getByTestId('review-load').click();
    await page.getByTestId('review').waitFor({ state: 'detached' });
    // Unticked: the link's policy and judge kind apply, the endpoints (URL and model) stay this person's.
    expect(await page.getByTestId('endpoint-base-url').inputValue()).toBe('https://api.mine.example/v1');
    expect(await page.getByTestId('endpoint-model').inputValue()).toBe('mine');
    expect(await page.getByTestId('judge-base-url').inputValue()).toBe('https://judge.mine.example/v1');
    expect(await page.getByTestId('judge-model').inputValue()).toBe('judge-mine');

    // The same link again, box ticked: both endpoints are the link's.
    await page.goto('about:blank');
    await page.goto(link);
    await page.getByTestId('review-use-endpoints').check();
    await page.getByTestId('review-load').click();
    await page.getByTestId('review').waitFor({ state: 'detached' });
    expect(await page.getByTestId('endpoint-base-url').inputValue()).toBe('https://evil.example/v1');
    expect(await page.getByTestId('endpoint-model').inputValue()).toBe('evil');
    expect(await page.getByTestId('judge-base-url').inputValue()).toBe('https://evil.example/judge');
    expect(await page.getByTestId('judge-model').inputValue()).toBe('evil-judge');
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  test('Stop ends a running evaluation early and keeps the rollouts it finished', async () => {
    const source = [
      "import { SingleTurnEnv, Rubric } from 'tabrl';",
      '',
      '/** Takes a while (asynchronously, so within the time limit). */',
      'async function slowReward(): Promise<number> {',
      '  await new Promise((resolve) => setTimeout(resolve, 400));',
      '  return 1;',
      '}',
      '',
      'export default function loadEnvironment() {',
      "  const dataset = Array.from({ length: 30 }, (_, i) => ({ question: `Reverse this text: slow ${i}` }));",
      "  return new SingleTurnEnv({ name: 'slow', dataset, rubric: new Rubric().addReward(slowReward) });",
      '}',
    ].join('\n');
    const { context, page } = await openPage(browser(), shareLink(appUrl, source, { name: 'slow', numTasks: 30 }));
    await page.getByTestId('review-run').click();
    await expect.poll(() => page.getByTestId('progress').textContent(), { timeout: 20_000 }).toMatch(/slow: [1-9]\d* \/ 30 rollouts/);
    await page.getByTestId('stop').click();
    await page.getByTestId('summary').waitFor({ timeout: 10_000 });
    expect(await page.getByTestId('summary').textContent()).toContain('Stopped early: cancelled');
    const finished = Number((await page.getByTestId('tab-rollouts').textContent())?.match(/\((\d+)\)/)?.[1]);
    expect(finished).toBeGreaterThan(0);
    expect(finished).toBeLessThan(30);
    expect(await page.locator('iframe[data-testid="sandbox-frame"]').count()).toBe(0);
    await context.close();
  });

  test('a malformed share link says why and loads nothing', async () => {
    const { context, page } = await openPage(browser(), `${appUrl}#v=1&code=%%%&seed=x`);
    await expect.poll(() => page.getByTestId('share-error').textContent()).toMatch(/Nothing was loaded/);
    await context.close();
  });

  test('an infinite loop in environment code is stopped and reported while the page stays responsive', async () => {
    const source = [
      "import { SingleTurnEnv, Rubric, type RewardContext } from 'tabrl';",
      '',
      '/** Never returns. */',
      'function stuckReward(_ctx: RewardContext): number {',
      '  for (;;) { /* spin */ }',
      '}',
      '',
      'export default function loadEnvironment() {',
      "  return new SingleTurnEnv({ name: 'forever', dataset: [{ question: 'Reverse this text: loop', answer: 'pool' }], rubric: new Rubric().addReward(stuckReward) });",
      '}',
    ].join('\n');
    const { context, page } = await openPage(browser(), shareLink(appUrl, source, { name: 'forever', timeLimitMs: 3000 }));
    await page.getByTestId('review-run').click();
    await page.getByTestId('stop').waitFor();
    // While the sandbox spins, the app answers: a tab switch renders before the 3 s limit stops the
    // loop (the failure is not shown yet). Measured against the limit, not the clock, so a loaded
    // machine's slow click cannot fail it (a fixed 1 s bound once saw 1.75 s).
    await page.getByTestId('tab-rollouts').click();
    await expect.poll(() => page.getByTestId('tab-rollouts').getAttribute('aria-selected'), { timeout: 3000 }).toBe('true');
    expect(await page.getByTestId('run-failure').count()).toBe(0);
    await page.getByTestId('tab-editor').click();

    const failure = page.getByTestId('run-failure');
    await failure.waitFor({ timeout: 15_000 });
    expect(await failure.textContent()).toMatch(/Environment "forever" was stopped: environment code in task 0, rollout 0 ran for more than 3\.0 s/);
    expect(await page.locator('iframe[data-testid="sandbox-frame"]').count()).toBe(0);
    await screenshot(page, '06-infinite-loop');

    // The sandbox restarts for the next run.
    await page.getByTestId('environment-picker').selectOption({ label: 'reverse-text' });
    await waitForEditor(page);
    await evaluateAndWait(page);
    await expect.poll(() => page.getByTestId('pass-rate').textContent()).toBe('100.0%');
    await context.close();
  });

  test('environment code cannot read the stored API key, the app storage, or the network', async () => {
    const exfiltrate = `${appUrl}__e2e/exfiltrate`;
    const source = [
      "import { SingleTurnEnv, Rubric } from 'tabrl';",
      '',
      '/** 1 when the API key in localStorage is out of reach. */',
      'function keyIsolatedReward(): number {',
      '  try {',
      "    const key = (globalThis as any).localStorage?.getItem('tabrl.endpoint.apiKey');",
      '    return key ? 0 : 1;',
      '  } catch {',
      '    return 1;',
      '  }',
      '}',
      '',
      '/** 1 when fetch cannot reach the app server. */',
      'async function networkIsolatedReward(): Promise<number> {',
      '  try {',
      `    await fetch(${JSON.stringify(exfiltrate)});`,
      '    return 0;',
      '  } catch {',
      '    return 1;',
      '  }',
      '}',
      '',
      '/** 1 when the app\'s IndexedDB cannot be opened. */',
      'async function storageIsolatedReward(): Promise<number> {',
      '  try {',
      '    await new Promise((resolve, reject) => {',
      "      const request = indexedDB.open('tabrl-playground');",
      '      request.onsuccess = resolve;',
      '      request.onerror = reject;',
      '    });',
      '    return 0;',
      '  } catch {',
      '    return 1;',
      '  }',
      '}',
      '',
      'export default function loadEnvironment() {',
      '  return new SingleTurnEnv({',
      "    name: 'escape-artist',",
      "    dataset: [{ question: 'Reverse this text: key', answer: 'yek' }],",
      '    rubric: new Rubric().addReward(keyIsolatedReward).addReward(networkIsolatedReward).addReward(storageIsolatedReward),',
      '    passThreshold: 3,',
      '  });',
      '}',
    ].join('\n');
    const { context, page } = await openPage(browser(), appUrl);
    await waitForEditor(page);
    await page.getByTestId('policy-endpoint').click();
    await page.getByTestId('endpoint-api-key').fill('sk-secret-test-key');
    await page.getByTestId('policy-expert').click();
    expect(await page.evaluate(() => localStorage.getItem('tabrl.endpoint.apiKey'))).toBe('sk-secret-test-key');

    const requests: string[] = [];
    context.on('request', (request) => requests.push(request.url()));
    await page.goto(shareLink(appUrl, source, { name: 'escape-artist' }));
    await page.getByTestId('review-run').click();
    await waitForSummary(page);
    await expect.poll(() => page.getByTestId('pass-rate').textContent()).toBe('100.0%');
    const scores = await page.locator('.scores').textContent();
    expect(scores).toContain('keyIsolatedReward');
    expect(scores).toContain('networkIsolatedReward');
    expect(requests.filter((url) => url.includes('__e2e/exfiltrate'))).toEqual([]);
    // The server saw nothing either (the trap answers with CORS allowed, so only the CSP stops it).
    expect(await (await fetch(`${appUrl}__e2e/exfiltrate-count`)).text()).toBe('0');
    await screenshot(page, '07-isolation');
    await context.close();
  });
});
