/** Shared e2e helpers: Debian's Chromium through Playwright, a fresh page at 1280×720, screenshots, and the share-link builder. */
import { mkdirSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright';
import { CHROMIUM_ARGS, findChromium } from '../../scripts/chromium.ts';
import { encodeShareHash, type SharedState } from '../../src/ui/share/url-state.ts';

/** Where the screenshots of the main screens go. */
export const SCREENSHOT_DIR = 'test-results/screenshots';

/** Launches Debian's Chromium (never a downloaded one). */
export async function launchBrowser(): Promise<Browser> {
  const executablePath = findChromium();
  if (!executablePath) throw new Error('no Chromium found: install Debian\'s chromium or set CHROMIUM_PATH');
  return chromium.launch({ executablePath, args: CHROMIUM_ARGS });
}

/** A fresh context (empty storage) and page at presenter size, with page errors collected. */
export async function openPage(browser: Browser, url: string): Promise<{ context: BrowserContext; page: Page; pageErrors: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 }, acceptDownloads: true });
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

/** A share link for `source` with small, fast settings (expert policy of reverse-text). */
export function shareLink(appUrl: string, source: string, overrides: Partial<SharedState> = {}): string {
  const state: SharedState = {
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
  return `${appUrl}#${encodeShareHash(state)}`;
}
