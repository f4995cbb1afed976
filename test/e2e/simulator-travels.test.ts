/**
 * The tab's tool simulator travels with the environment, in Chromium, offline: on lesson 7's
 * simulated Parcelo file with a scripted simulator endpoint (answered inside the page), a warm-up
 * whose teacher calls an unplanted parcel gets its result from that simulator (the job's environment
 * calls the simulator the person chose), and one GRPO step trains with it lent; both jobs say so. The
 * download of the file records the simulator for tabrl; a share link carries its kind, URL and model
 * but not its key, and opened in a fresh browser restores the choice; so does importing the downloaded
 * file there (its header names the simulator). Screenshots: simulator-*.png.
 */
import { readFileSync } from 'node:fs';
import type { Page, Route } from 'playwright';
import { describe, expect, inject, test } from 'vitest';
import type { Task } from '../../src/envs/index.ts';
import { readSimulatorRecord } from '../../src/envs/studio/index.ts';
import { PRACTICE_TASKS, TASKS } from '../../src/ui/features/lessons/sources/parcel-desk.ts';
import { fillFields, jobOutcome, useBrowser, openPage, screenshot, waitForEditor } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();

const SIMULATOR_URL = 'http://simulator.invalid/v1';
const TEACHER_URL = 'http://teacher.invalid/v1';
const SIMULATOR_KEY = 'sk-simulator-never-shared';
const JSON_HEADERS = { 'content-type': 'application/json', 'access-control-allow-origin': '*', 'access-control-allow-headers': '*' };

/** A chat completion body with one message. */
function completion(message: Record<string, unknown>, finishReason: string): string {
  return JSON.stringify({ id: 'c', object: 'chat.completion', model: 'm', choices: [{ index: 0, message, finish_reason: finishReason }] });
}

/** The training tasks by question, so the scripted teacher can follow a task's planted path. */
const byQuestion = new Map<string, Task>([...TASKS, ...PRACTICE_TASKS].map((task) => [task.prompt!.at(-1)!.content as string, task]));

/**
 * The warm-up's teacher: first it tracks PX-1005 (a recorded parcel that no task plants, so the
 * simulator answers), then it follows the task's planted calls, then it answers: a passing rollout.
 */
function teacherReply(route: Route): Promise<void> {
  if (route.request().method() === 'OPTIONS') return route.fulfill({ status: 204, headers: JSON_HEADERS });
  const messages = JSON.parse(route.request().postData() ?? '{}').messages as Array<{ role: string; content: string }>;
  const task = byQuestion.get(messages.find((message) => message.role === 'user')!.content)!;
  const planted = task.info!.planted as Array<{ tool: string; arguments: Record<string, unknown> }>;
  const toolTurns = messages.filter((message) => message.role === 'tool').length;
  const call = toolTurns === 0 ? { tool: 'track_parcel', arguments: { tracking_id: 'PX-1005' } } : planted[toolTurns - 1];
  if (!call) return route.fulfill({ status: 200, headers: JSON_HEADERS, body: completion({ role: 'assistant', content: task.answer ?? 'done' }, 'stop') });
  const toolCall = { id: `call_${toolTurns}`, type: 'function', function: { name: call.tool, arguments: JSON.stringify(call.arguments) } };
  return route.fulfill({ status: 200, headers: JSON_HEADERS, body: completion({ role: 'assistant', content: null, tool_calls: [toolCall] }, 'tool_calls') });
}

/** Starts lesson 7 (nano, the in-tab policy) with a scripted simulator endpoint and a scripted teacher endpoint routed inside the page. */
async function lessonWithScriptedEndpoints(page: Page, simulatorCalls: string[]): Promise<void> {
  await waitForEditor(page);
  await page.route(`${SIMULATOR_URL}/chat/completions`, (route) => {
    if (route.request().method() === 'OPTIONS') return route.fulfill({ status: 204, headers: JSON_HEADERS });
    simulatorCalls.push(String(JSON.parse(route.request().postData() ?? '{}').messages?.[0]?.content ?? ''));
    return route.fulfill({ status: 200, headers: JSON_HEADERS, body: completion({ role: 'assistant', content: '{"tracking_id":"PX-1005","status":"lost","location":"Oslo hub","eta":"2026-04-01"}' }, 'stop') });
  });
  await page.route(`${TEACHER_URL}/chat/completions`, teacherReply);
  await page.getByTestId('lesson-picker').selectOption('7');
  await page.getByTestId('lesson-start').click();
  await waitForEditor(page, 'Lesson 7: an agent for a tool you cannot call');
}

describe("the tab's tool simulator travels with the environment", () => {
  test('a warm-up and one GRPO step on the simulated Parcelo tasks lend the chosen simulator; the download records it; a share link and an import of the download restore it without its key', { timeout: 400_000 }, async () => {
    const { context, page, pageErrors } = await openPage(browser(), appUrl);
    const simulatorCalls: string[] = [];
    await lessonWithScriptedEndpoints(page, simulatorCalls);
    // The teacher's endpoint is set under Policy; the policy itself stays the in-tab nano, the student.
    await page.getByTestId('policy-endpoint').click();
    await fillFields(page, { 'endpoint-base-url': TEACHER_URL, 'endpoint-model': 'teacher' });
    await page.getByTestId('policy-in-tab').click();
    await page.getByTestId('simulator-kind').selectOption('endpoint');
    await fillFields(page, { 'simulator-base-url': SIMULATOR_URL, 'simulator-model': 'sim-m', 'simulator-api-key': SIMULATOR_KEY });
    const label = `endpoint sim-m at ${SIMULATOR_URL}`;

    // The warm-up: the teacher's first call of each task is simulated by the chosen endpoint.
    await page.getByTestId('mode-warmup').click();
    await page.getByTestId('teacher-endpoint').click();
    await fillFields(page, { 'train-demonstrations': '2', 'train-sftSteps': '1', 'train-sftBatchSize': '2' });
    await page.getByTestId('start-training').click();
    const warmup = await jobOutcome(page, 240_000);
    expect(warmup).toMatch(/Warm-up finished\. 2 demonstrations kept/);
    expect(warmup).toContain(`The tools are simulated by ${label} (lent as args.simulatorClient).`);
    expect(simulatorCalls).toHaveLength(2);
    expect(simulatorCalls[0]).toContain('You simulate the tool "track_parcel"');
    await page.getByTestId('training-done').scrollIntoViewIfNeeded();
    await screenshot(page, 'simulator-warmup');

    // One GRPO step of nano on the simulated environment, the simulator lent.
    await page.getByTestId('mode-train').click();
    await fillFields(page, { 'train-grpoSteps': '1', 'train-tasksPerStep': '1', 'train-groupSize': '2', 'train-maxTokens': '32' });
    await page.getByTestId('start-training').click();
    const trained = await jobOutcome(page, 240_000);
    expect(trained).toMatch(/^Training finished\./);
    expect(trained).toContain(`The tools are simulated by ${label} (lent as args.simulatorClient).`);
    await page.getByTestId('training-done').scrollIntoViewIfNeeded();
    await screenshot(page, 'simulator-grpo-step');

    // The download records the simulator, and how tabrl lends the same; not the key.
    const [file] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-environment').click()]);
    const downloaded = readFileSync((await file.path())!, 'utf8');
    expect(readSimulatorRecord(downloaded)).toEqual({ label, baseURL: SIMULATOR_URL, model: 'sim-m' });
    expect(downloaded.split('\n')[1]).toContain(`--simulator-base-url ${SIMULATOR_URL} --simulator-model sim-m`);
    expect(downloaded).not.toContain(SIMULATOR_KEY);
    expect(downloaded).toContain('Lesson 7: an agent for a tool you cannot call');

    // The share link: the simulator's kind, URL and model, never its key.
    await page.getByTestId('share').click();
    await expect.poll(() => page.url()).toContain('sim=endpoint');
    const link = page.url();
    expect(link).toContain(`surl=${encodeURIComponent(SIMULATOR_URL)}`);
    expect(link).toContain('smodel=sim-m');
    expect(link).not.toContain(SIMULATOR_KEY);
    expect(pageErrors).toEqual([]);
    await context.close();

    // Elsewhere (a fresh browser, nothing stored): the review names the simulator; loading restores the choice.
    const elsewhere = await openPage(browser(), link);
    await elsewhere.page.getByTestId('review').waitFor();
    expect(await elsewhere.page.getByTestId('review').textContent()).toContain(`tool simulator: endpoint sim-m at ${SIMULATOR_URL}`);
    await screenshot(elsewhere.page, 'simulator-share-review');
    await elsewhere.page.getByTestId('review-load').click();
    await elsewhere.page.getByTestId('review').waitFor({ state: 'detached' });
    expect(await elsewhere.page.getByTestId('simulator-kind').inputValue()).toBe('endpoint');
    expect(await elsewhere.page.getByTestId('simulator-base-url').inputValue()).toBe(SIMULATOR_URL);
    expect(await elsewhere.page.getByTestId('simulator-model').inputValue()).toBe('sim-m');
    expect(await elsewhere.page.getByTestId('simulator-api-key').inputValue()).toBe('');
    expect(await elsewhere.page.getByTestId('simulator-kind-lent').textContent()).toContain(`${label} as args.simulatorClient`);
    await elsewhere.page.getByTestId('simulator-panel').scrollIntoViewIfNeeded();
    await screenshot(elsewhere.page, 'simulator-share-restored');
    expect(elsewhere.pageErrors).toEqual([]);
    await elsewhere.context.close();

    // Elsewhere again, by file: importing the download picks the simulator its header names (never a key).
    const imported = await openPage(browser(), appUrl);
    await waitForEditor(imported.page);
    await imported.page.getByTestId('import-environment').setInputFiles({ name: 'parcel-desk.ts', mimeType: 'text/plain', buffer: Buffer.from(downloaded) });
    await imported.page.getByTestId('review').waitFor();
    expect(await imported.page.getByTestId('review').textContent()).toContain(`loading it picks the same: endpoint sim-m at ${SIMULATOR_URL} (no key travels with a file)`);
    await screenshot(imported.page, 'simulator-import-review');
    await imported.page.getByTestId('review-load').click();
    await imported.page.getByTestId('review').waitFor({ state: 'detached' });
    expect(await imported.page.getByTestId('simulator-kind').inputValue()).toBe('endpoint');
    expect(await imported.page.getByTestId('simulator-base-url').inputValue()).toBe(SIMULATOR_URL);
    expect(await imported.page.getByTestId('simulator-model').inputValue()).toBe('sim-m');
    expect(await imported.page.getByTestId('simulator-api-key').inputValue()).toBe('');
    expect(imported.pageErrors).toEqual([]);
    await imported.context.close();
  });
});
