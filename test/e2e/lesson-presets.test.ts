/**
 * Lessons 1–4 end to end in Chromium, each from its own preset (Start lesson), checking that what the
 * lesson's text says is what the app then shows: the numbers in the fields it sets, the rewards the
 * expert gets, the model it loads, and what a run lists. Lesson 3 runs a real-format model served under
 * SmolLM2-135M-Instruct's URLs (huggingface.co routed to a small Llama with a 512-token vocabulary,
 * so ids past 264 are sampled). Long jobs (lesson 2's 300 SFT and 60 GRPO steps, lesson 3's 30) are
 * checked in their fields and in the text, then run with a few steps so the suite stays in minutes.
 * Screenshots: lesson-preset-*.png.
 */
import { readFileSync } from 'node:fs';
import type { BrowserContext, Page, Route } from 'playwright';
import { describe, expect, inject, test } from 'vitest';
import { LESSONS } from '../../src/ui/features/lessons/lessons.ts';
import { tinyHfModelFiles } from '../support/tiny-hf-model.ts';
import { fillFields, jobOutcome, useBrowser, openPage, screenshot, waitForEditor, waitForSummary } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();

/** The text of lesson `id`'s steps, as one string (markup as written in the table). */
function lessonText(id: number): string {
  return LESSONS[id - 1]!.steps.join('\n');
}

/** Opens `#lesson=<id>` and presses Start lesson; resolves once its note is shown. */
async function startLesson(page: Page, id: number, editorText: string): Promise<void> {
  await page.goto(`${appUrl}#lesson=${id}`);
  await page.getByTestId('lesson-panel').waitFor();
  await page.getByTestId('lesson-start').click();
  await expect.poll(() => page.getByTestId('lesson-note').textContent()).toMatch(new RegExp(`Opened "${LESSONS[id - 1]!.preset.fileName.replace(/[()]/g, '\\$&')}"`));
  await waitForEditor(page, editorText);
}

/** The summary's reward functions: name → [weight, mean] as shown. */
async function scoreRows(page: Page): Promise<Record<string, [string, string]>> {
  const rows = await page.getByTestId('summary').locator('table.scores tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')));
  return Object.fromEntries(rows.map(([name, weight, mean]) => [name!, [weight!, mean!]]));
}

/** The field `testId`'s value. */
function field(page: Page, testId: string): Promise<string> {
  return page.getByTestId(testId).inputValue();
}

/** Lesson 1's file with the reward function its text asks for: the snippet above loadEnvironment, and the rubric's extra addReward. */
function lesson1EditedSource(): string {
  const step = LESSONS[0]!.steps.find((text) => text.includes('```ts'))!;
  const snippet = /```ts\n([\s\S]*?)\n```/.exec(step)![1]!;
  const builtin = readFileSync(new URL('../../src/envs/builtin/reverse-text.ts', import.meta.url), 'utf8')
    .replace("'../index.ts'", "'tabrl'")
    .replace("'./random.ts'", "'tabrl/builtin/random'");
  const edited = builtin
    .replace('/** Builds the reverse-text environment. */', `${snippet}\n\n/** Builds the reverse-text environment. */`)
    .replace('.addReward(parser.formatReward(), FORMAT_WEIGHT)', '.addReward(parser.formatReward(), FORMAT_WEIGHT).addReward(tidyAnswerReward, 0.5)');
  expect(edited).toContain('addReward(tidyAnswerReward, 0.5)');
  return edited;
}

/** Replaces the editor's whole text with `text`, pasted from the clipboard (typing would let Monaco auto-close brackets). */
async function replaceEditorText(context: BrowserContext, page: Page, text: string): Promise<void> {
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await page.evaluate((value) => navigator.clipboard.writeText(value), text);
  await page.locator('.monaco-editor .view-lines').first().click();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Control+V');
}

describe('lesson presets, end to end', () => {
  test('lesson 1: 10 tasks × 2 answers, reward 1.200 with the expert, 1.700 with the reward function the text asks for', { timeout: 120_000 }, async () => {
    const { context, page, pageErrors } = await openPage(browser(), appUrl);
    const text = lessonText(1);
    await startLesson(page, 1, 'Reverse a short text');
    const [numTasks, rollouts] = [await field(page, 'setting-numTasks'), await field(page, 'setting-rolloutsPerTask')];
    expect(text).toContain(`${numTasks} held-out tasks, ${rollouts} answers each`);
    expect(await page.getByTestId('policy-expert').getAttribute('aria-checked')).toBe('true');
    expect(text).toContain('**Scripted expert**');

    await page.getByTestId('evaluate').click();
    await waitForSummary(page);
    const reward = (await page.getByTestId('reward-mean').textContent())!.split(' ')[0]!;
    expect(text).toContain(`reward ${reward}`);
    expect(await page.getByTestId('pass-rate').textContent()).toBe('100.0%');
    expect(await page.getByTestId('summary').textContent()).toMatch(new RegExp(`${Number(numTasks) * Number(rollouts)}\\s*rollouts · ${numTasks} tasks`));

    await replaceEditorText(context, page, lesson1EditedSource());
    await waitForEditor(page, 'tidyAnswerReward');
    await page.waitForTimeout(1_000); // the diagnostics follow the edit
    await expect.poll(() => page.getByTestId('problems').textContent(), { timeout: 20_000 }).toBe('No problems');
    await page.getByTestId('evaluate').click();
    await expect.poll(async () => (await scoreRows(page)).tidyAnswerReward, { timeout: 60_000 }).toEqual(['0.5', '1.000']);
    const withTidy = (await page.getByTestId('reward-mean').textContent())!.split(' ')[0]!;
    expect(withTidy).toBe('1.700');
    expect(text).toContain(`(${withTidy})`);
    await screenshot(page, 'lesson-preset-1');
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  test('lesson 2: its arguments, warm-up and GRPO numbers are the fields\'; nano loads from the app\'s files, its baseline is the text\'s (about 0.4) and is the run\'s "before"', { timeout: 300_000 }, async () => {
    const { context, page, pageErrors } = await openPage(browser(), appUrl);
    const text = lessonText(2);
    await startLesson(page, 2, 'Reverse a short text');
    expect(text).toContain(`arguments \`${await field(page, 'setting-args')}\``);
    expect(await page.getByTestId('policy-in-tab').getAttribute('aria-checked')).toBe('true');
    expect(await page.getByTestId('mode-warmup').getAttribute('aria-checked')).toBe('true');
    expect(text).toContain(`makes ${await field(page, 'train-demonstrations')} demonstrations`);
    expect(text).toContain(`${await field(page, 'train-sftSteps')} steps of supervised fine-tuning`);
    await page.getByTestId('mode-train').click();
    expect(text).toContain(`GRPO, ${await field(page, 'train-grpoSteps')} steps (the **GRPO steps** field)`);
    expect(text).toContain(`samples ${await field(page, 'train-groupSize')} answers to each of ${await field(page, 'train-tasksPerStep')} tasks`);
    expect(text).toContain(`(**KL β** ${await field(page, 'train-klBeta')})`);

    // Baseline with the preset's evaluation: nano, pretrained, gets part of most reversals right ("reward about 0.4").
    expect(await page.getByTestId('model-nano').getAttribute('aria-checked')).toBe('true');
    expect(text).toContain('reward about 0.4');
    await page.getByTestId('mode-evaluate').click();
    await page.getByTestId('evaluate').click();
    await waitForSummary(page, 180_000);
    expect(await page.getByTestId('engine-status').textContent()).toMatch(/nano \(pretrained, 0\.\d+M\)/);
    const baseline = (await page.getByTestId('reward-mean').textContent())!.split(' ')[0]!;
    expect(Number(baseline)).toBeGreaterThan(0.25);
    expect(Number(baseline)).toBeLessThan(0.55);

    // The warm-up and GRPO the text describes, shortened.
    await page.getByTestId('mode-warmup').click();
    await fillFields(page, { 'train-demonstrations': '8', 'train-sftSteps': '3', 'train-sftBatchSize': '4' });
    await page.getByTestId('start-training').click();
    expect(await jobOutcome(page, 150_000)).toMatch(/Warm-up finished\. 8 demonstrations kept/);
    await page.getByTestId('mode-train').click();
    await fillFields(page, { 'train-grpoSteps': '2', 'train-tasksPerStep': '2', 'train-groupSize': '4' });
    await page.getByTestId('start-training').click();
    expect(await jobOutcome(page, 150_000)).toMatch(/Training finished/);
    // The charts the text reads: Reward, Pass rate, Entropy, KL (flat at 0 with KL β 0).
    for (const title of ['Reward', 'Pass rate', 'Entropy', 'KL']) expect(await page.locator('.chart figcaption').allTextContents()).toEqual(expect.arrayContaining([expect.stringContaining(title)]));
    const evaluations = page.getByTestId('run-evaluations').locator('tbody tr');
    expect(await evaluations.first().locator('td').allTextContents()).toEqual(['before training (the starting weights)', baseline, expect.stringMatching(/%$/)]);
    await screenshot(page, 'lesson-preset-2');
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  test('lesson 3: Start lesson loads "SmolLM2-135M-Instruct" (a routed real-format model, vocabulary 512) with LoRA rank 16; it evaluates and trains', { timeout: 420_000 }, async () => {
    const folder = await tinyHfModelFiles(readFileSync(new URL('../fixtures/tokenizers/smollm2-chat-template.jinja', import.meta.url), 'utf8'), 5, { wide: true });
    const { context, page, pageErrors } = await openPage(browser(), appUrl);
    await serveUnderHuggingFace(context, folder);
    page.on('console', (message) => { if (message.type() === 'error') console.log(`page: ${message.text()}`); });
    const text = lessonText(3);
    await startLesson(page, 3, 'Arithmetic word problems');
    // Start lesson also loads the model: the engine holds it with its LoRA adapters, and nothing else was pressed.
    await expect.poll(() => page.getByTestId('engine-status').textContent(), { timeout: 180_000 }).toMatch(/SmolLM2-135M-Instruct.*LoRA rank 16/);
    expect(text).toContain('**SmolLM2-135M-Instruct**');
    expect(text).toContain('rank-16');
    const size = Number(/(\d+) MB/.exec((await page.getByTestId('model-detail-smollm2-135m-instruct').textContent())!)![1]);
    const said = Number(/about (\d+) MB/.exec(text)![1]);
    expect(Math.abs(size - said)).toBeLessThanOrEqual(10);
    expect(text).toContain(`${await field(page, 'setting-numTasks')} held-out problems`);
    expect(await field(page, 'setting-temperature')).toBe('0');
    expect(text).toContain('greedy answers');
    await page.getByTestId('mode-train').click();
    expect(text).toContain(`${await field(page, 'train-grpoSteps')} steps of ${await field(page, 'train-tasksPerStep')} problems × ${await field(page, 'train-groupSize')} answers each`);

    // Baseline (shortened to 4 problems): a random model rarely uses the tags.
    await page.getByTestId('mode-evaluate').click();
    await fillFields(page, { 'setting-numTasks': '4', 'setting-maxTokens': '16' });
    await page.getByTestId('evaluate').click();
    await waitForSummary(page, 180_000);
    const baseline = (await page.getByTestId('reward-mean').textContent())!.split(' ')[0]!;

    await page.getByTestId('mode-train').click();
    await fillFields(page, { 'train-grpoSteps': '1', 'train-tasksPerStep': '2', 'train-groupSize': '2', 'train-maxTokens': '8' });
    await page.getByTestId('start-training').click();
    expect(await jobOutcome(page, 300_000)).toMatch(/Training finished/);
    await expect.poll(() => page.getByTestId('run-grpo-steps').textContent()).toBe('1 GRPO step');
    const titles = await page.getByTestId('token').evaluateAll((nodes) => nodes.map((node) => node.getAttribute('title') ?? ''));
    const ids = titles.map((title) => Number(/^token (\d+):/.exec(title)?.[1] ?? -1));
    expect(ids.some((id) => id >= 264)).toBe(true);
    expect(ids.every((id) => id >= 0 && id < 512)).toBe(true);

    // Evaluate again and compare with the baseline: the run lists both, the baseline first.
    await page.getByTestId('mode-evaluate').click();
    await page.getByTestId('evaluate').click();
    await waitForSummary(page, 180_000);
    await page.getByTestId('tab-training').click();
    const rows = page.getByTestId('run-evaluations').locator('tbody tr');
    await expect.poll(() => rows.count()).toBe(2);
    expect(await rows.nth(0).locator('td').allTextContents()).toEqual(['before training (the starting weights)', baseline, expect.stringMatching(/%$/)]);
    expect(await rows.nth(1).locator('td').first().textContent()).toBe('after 0 SFT + 1 GRPO steps');
    expect(await page.getByTestId('error-boundary').count()).toBe(0);
    await screenshot(page, 'lesson-preset-3');
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  test('lesson 4: the expert\'s poems meet both metrics (1.0) but the judge gives 0.6 and none passes; a warm-up keeps none of them, and the in-tab model trains on judgeReward alone with the metrics charted beside it', { timeout: 300_000 }, async () => {
    const { context, page, pageErrors } = await openPage(browser(), appUrl);
    const text = lessonText(4);
    await startLesson(page, 4, 'Lesson 4: a judge that can be fooled');
    await expect.poll(() => page.getByTestId('problems').textContent(), { timeout: 20_000 }).toBe('No problems');
    await page.getByTestId('evaluate').click();
    await waitForSummary(page);
    const scores = await scoreRows(page);
    expect(scores.mentionsWordMetric).toEqual(['0', '1.000']);
    expect(scores.twoLinesMetric).toEqual(['0', '1.000']);
    expect(text).toContain('both metrics 1.0');
    expect(text).toMatch(/Two metrics sit beside the judge at weight 0/);
    const judged = (await page.getByTestId('reward-mean').textContent())!.split(' ')[0]!;
    expect(text).toContain(`the judge gives them only ${Number(judged).toFixed(1)}`);
    expect(await page.getByTestId('pass-rate').textContent()).toBe('0.0%');
    expect(text).toContain('none passes');
    await page.getByTestId('mode-train').click();
    expect(text).toContain(`after ${await field(page, 'train-grpoSteps')}`);

    // A warm-up keeps only passing demonstrations, and this judge passes none of the expert's poems: Warm up says so and trains nothing.
    expect(text).toContain('this judge passes none of the expert\'s poems: **Warm up** says so and trains nothing');
    await page.getByTestId('policy-in-tab').click();
    await page.getByTestId('mode-warmup').click();
    await fillFields(page, { 'train-demonstrations': '4', 'train-sftSteps': '2', 'train-sftBatchSize': '2' });
    await page.getByTestId('start-training').click();
    expect(await jobOutcome(page, 150_000)).toMatch(/None of the 4 rollouts by the built-in's expert passed the environment's threshold, so nothing was trained/);
    // Train from the fresh weights (shortened): GRPO follows judgeReward, and the metrics are charted beside it.
    await page.getByTestId('mode-train').click();
    await fillFields(page, { 'train-grpoSteps': '1', 'train-tasksPerStep': '2', 'train-groupSize': '2', 'train-maxTokens': '16' });
    await page.getByTestId('start-training').click();
    expect(await jobOutcome(page, 150_000)).toMatch(/Training finished/);
    const legend = await page.getByTestId('chart-reward').locator('.chart-legend').textContent();
    expect(legend).toContain('judgeReward');
    expect(legend).toContain('twoLinesMetric');
    expect(legend).toContain('mentionsWordMetric');
    await screenshot(page, 'lesson-preset-4');
    expect(pageErrors).toEqual([]);
    await context.close();
  });
});

/** Serves `folder` under every huggingface.co file URL (with CORS, as the CDN answers). */
async function serveUnderHuggingFace(context: BrowserContext, folder: Map<string, Uint8Array>): Promise<void> {
  await context.route('https://huggingface.co/**', async (route: Route) => {
    const url = route.request().url();
    const bytes = folder.get(url.slice(url.lastIndexOf('/') + 1));
    const headers = { 'access-control-allow-origin': '*', 'access-control-expose-headers': 'content-length' };
    if (!bytes) return route.fulfill({ status: 404, headers, body: 'Entry not found' });
    await route.fulfill({ status: 200, headers: { ...headers, 'content-type': 'application/octet-stream' }, body: Buffer.from(bytes) });
  });
}
