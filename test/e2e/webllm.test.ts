/**
 * The WebLLM policy in real Chromium, with every request to huggingface.co and
 * raw.githubusercontent.com (and any other host but the app's) aborted, so nothing is downloaded:
 * picking WebLLM lists prebuilt models from the lazily loaded WebLLM chunk, Load and Evaluate show a
 * clear download error, and the app stays usable (the expert still evaluates). A real WebLLM model
 * cannot run here: no model can be downloaded, and SwiftShader lacks shader-f16 and is too slow.
 */
import type { BrowserContext } from 'playwright';
import { describe, expect, inject, test } from 'vitest';
import { useBrowser, openPage, screenshot } from './browser.ts';

const appUrl = inject('appUrl');
const appOrigin = new URL(appUrl).origin;
const browser = useBrowser();

/** Aborts every request that leaves the app's origin; returns the URLs that were attempted. */
async function blockDownloads(context: BrowserContext): Promise<string[]> {
  const attempted: string[] = [];
  const abort = async (route: { request(): { url(): string }; abort(code?: string): Promise<void> }) => {
    attempted.push(route.request().url());
    await route.abort('internetdisconnected');
  };
  await context.route('**/huggingface.co/**', abort);
  await context.route('**/raw.githubusercontent.com/**', abort);
  await context.route((url) => url.protocol.startsWith('http') && url.origin !== appOrigin, abort);
  return attempted;
}

describe('WebLLM policy', () => {
  test('picking WebLLM lists models; Load and Evaluate fail with a clear download error; the app stays usable', async () => {
    const { context, page, pageErrors } = await openPage(browser(), 'about:blank');
    const attempted = await blockDownloads(context);
    await page.goto(appUrl);
    await page.getByTestId('evaluate').waitFor();

    // The main bundle does not carry WebLLM: its chunk loads when the policy is picked.
    const before = await page.evaluate(() => performance.getEntriesByType('resource').map((entry) => entry.name));
    await page.getByTestId('policy-webllm').click();
    await page.getByTestId('webllm-fields').waitFor();
    await expect.poll(() => page.getByTestId('webllm-model').locator('option').count(), { timeout: 30_000 }).toBeGreaterThan(5);
    const options = await page.getByTestId('webllm-model').locator('option').allTextContents();
    expect(options.some((text) => /^SmolLM2-360M-Instruct-q4f32_1-MLC — \d+ MB GPU memory$/.test(text))).toBe(true);
    expect(options.some((text) => text.includes('(needs shader-f16)'))).toBe(true);
    await expect.poll(() => page.getByTestId('webllm-cached').textContent(), { timeout: 20_000 }).toMatch(/Not downloaded yet/);
    const after = await page.evaluate(() => performance.getEntriesByType('resource').map((entry) => entry.name));
    expect(after.length).toBeGreaterThan(before.length);

    // Load: the download is refused, and the fields say so.
    await page.getByTestId('webllm-load').click();
    const error = page.getByTestId('webllm-error');
    await error.waitFor({ timeout: 60_000 });
    expect(await error.getAttribute('role')).toBe('alert');
    expect(await error.textContent()).toMatch(/WebLLM could not download "SmolLM2-360M-Instruct-q4f32_1-MLC".*check the connection and try Load again/);
    expect(attempted.some((url) => url.includes('huggingface.co') || url.includes('raw.githubusercontent.com'))).toBe(true);
    await screenshot(page, 'webllm-download-error');

    // Evaluate with WebLLM tries again and fails the run with the same clear message.
    await page.getByTestId('evaluate').click();
    await expect.poll(() => page.getByTestId('run-failure').textContent(), { timeout: 60_000 }).toMatch(/WebLLM could not download/);

    // The app stays usable: the scripted expert evaluates as before.
    await page.getByTestId('policy-expert').click();
    await page.getByTestId('evaluate').click();
    await page.getByTestId('summary').waitFor({ timeout: 60_000 });
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  test('a WebLLM warm-up teacher that cannot download fails the warm-up with a clear message and trains nothing', async () => {
    const { context, page, pageErrors } = await openPage(browser(), 'about:blank');
    await blockDownloads(context);
    await page.goto(appUrl);
    await page.getByTestId('mode-warmup').click();
    await page.getByTestId('teacher-webllm').click();
    expect(await page.getByTestId('teacher-webllm').getAttribute('aria-checked')).toBe('true');
    expect(await page.getByTestId('teacher-hint').textContent()).toMatch(/WebLLM SmolLM2-360M-Instruct-q4f32_1-MLC .*The in-tab model is the student/);
    await page.getByTestId('train-demonstrations').fill('4');
    await page.getByTestId('start-training').click();
    await expect.poll(() => page.getByTestId('training-failure').textContent(), { timeout: 120_000 }).toMatch(/WebLLM could not download "SmolLM2-360M-Instruct-q4f32_1-MLC"/);
    expect(await page.getByTestId('training-done').count()).toBe(0);
    await screenshot(page, 'webllm-teacher-error');
    expect(pageErrors).toEqual([]);
    await context.close();
  });
});
