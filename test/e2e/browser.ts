/** Shared e2e helpers: Debian's Chromium through Playwright, a fresh page at 1280×720, screenshots, waiting for the editor and for jobs, and the share-link builder. */
import { mkdirSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright';
import { afterAll, beforeAll, expect } from 'vitest';
import { CHROMIUM_ARGS, findChromium } from '../../scripts/chromium.ts';
import { encodeShareHash, migrateSharedState, type FlatSharedState } from '../../src/ui/features/share/url-state.ts';

/** Where the screenshots of the main screens go. */
export const SCREENSHOT_DIR = 'test-results/screenshots';

/** Launches Debian's Chromium (never a downloaded one). */
export async function launchBrowser(): Promise<Browser> {
  const executablePath = findChromium();
  if (!executablePath) throw new Error('no Chromium found: install Debian\'s chromium or set CHROMIUM_PATH');
  return chromium.launch({ executablePath, args: CHROMIUM_ARGS });
}

/**
 * Launches one Chromium before the calling file's tests and closes it after them; returns a getter,
 * since the browser exists only once the tests start.
 */
export function useBrowser(): () => Browser {
  let browser: Browser | undefined;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });
  return () => {
    if (browser === undefined) throw new Error('the browser is launched before the tests: call the getter inside a test or hook');
    return browser;
  };
}

/** What a fresh page starts with besides empty storage. */
export interface OpenPageOptions {
  /**
   * The in-tab model remembered before the app first loads ('tiny': the from-scratch model, for tests
   * about training mechanics rather than about nano, the default); a choice made later in the test wins.
   */
  inTabModel?: string;
}

/** A fresh context (empty storage) and page at presenter size, with page errors collected. */
export async function openPage(browser: Browser, url: string, options: OpenPageOptions = {}): Promise<{ context: BrowserContext; page: Page; pageErrors: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 }, acceptDownloads: true });
  if (options.inTabModel) {
    // Init scripts run in every frame and page: only the app's own page, not the environment's sandboxed frame or about:blank (no storage there).
    await context.addInitScript((model) => {
      if (window !== window.top || location.protocol === 'about:') return;
      if (localStorage.getItem('tabrl.inTabModel') === null) localStorage.setItem('tabrl.inTabModel', model);
    }, options.inTabModel);
  }
  const page = await context.newPage();
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  await page.goto(url);
  return { context, page, pageErrors };
}

/** Saves a screenshot of the page as test-results/screenshots/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: `${SCREENSHOT_DIR}/${name}.png` });
}

/** Waits until Monaco shows the editor with `text` in it (default: the reverse-text built-in the app opens on). */
export async function waitForEditor(page: Page, text = 'Reverse a short text'): Promise<void> {
  await page.locator('.monaco-editor .view-lines').first().waitFor();
  // Monaco renders spaces as no-break spaces.
  const content = async () => (await page.locator('.monaco-editor .view-lines').first().textContent())?.replace(/\u00a0/g, ' ');
  await expect.poll(content, { timeout: 20_000 }).toContain(text);
}

/** Waits for a warm-up or training job to end and returns what the panel says (the failure, if it failed). */
export async function jobOutcome(page: Page, timeout: number): Promise<string> {
  const ended = page.locator('[data-testid="training-done"], [data-testid="training-failure"]');
  try {
    await ended.first().waitFor({ timeout });
  } catch (error) {
    throw new Error(`the job did not end within ${timeout / 1000} s; the run panel says: ${await page.locator('.run-card').textContent()}`, { cause: error });
  }
  return (await ended.first().textContent()) ?? '';
}

/**
 * Waits for an evaluation's summary; a timeout says what the run panel shows. The default leaves
 * room for a first evaluation while the other e2e files' Chromiums share the 2 CPU cores.
 */
export async function waitForSummary(page: Page, timeout = 60_000): Promise<void> {
  try {
    await page.getByTestId('summary').waitFor({ timeout });
  } catch (error) {
    throw new Error(`no evaluation summary within ${timeout / 1000} s; the run panel says: ${await page.locator('.run-card').textContent()}`, { cause: error });
  }
}

/** Fills inputs by their data-testid. */
export async function fillFields(page: Page, values: Record<string, string>): Promise<void> {
  for (const [testId, value] of Object.entries(values)) await page.getByTestId(testId).fill(value);
}

/** A share link for `source` with small, fast settings (expert policy of reverse-text). */
export function shareLink(appUrl: string, source: string, overrides: Partial<FlatSharedState> = {}): string {
  const state: FlatSharedState = {
    source,
    name: 'shared',
    builtin: 'reverse-text',
    args: {},
    policy: 'expert',
    model: 'default',
    baseURL: 'http://localhost:8000/v1',
    numTasks: 1,
    rolloutsPerTask: 1,
    concurrency: 1,
    maxTokens: 64,
    temperature: 0,
    seed: 0,
    timeLimitMs: 5000,
    ...overrides,
  };
  return `${appUrl}#${encodeShareHash(migrateSharedState(state))}`;
}
