/**
 * The Studio tab end to end in Chromium, offline: tasks from the sample document with the heuristic
 * generator and solver (kept and rejected candidates with reasons, Cancel of a generator that never
 * answers, "Open as environment"), traces with malformed lines reported by number, calibration of
 * the generated file against the scripted student (histogram, labels, "Use learnable tasks"), and
 * the Audit panel catching lesson 4's gullible-judge hack and turning it into criteria that gate the
 * reward (the hack then fails), and lesson 5's
 * last step (its file passes the audit).
 * Screenshots at 1280×720 and 800 wide go to test-results/screenshots/.
 */
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright';
import { describe, expect, inject, test } from 'vitest';
import { fillFields, useBrowser, openPage, screenshot, waitForEditor, waitForSummary } from './browser.ts';

const appUrl = inject('appUrl');
const browser = useBrowser();

async function openStudio(page: Page, section: 'documents' | 'traces' | 'calibrate' | 'audit'): Promise<void> {
  await page.getByTestId('tab-studio').click();
  await page.getByTestId(`studio-section-${section}`).click();
}

/** Makes tasks from the sample document with the offline heuristic roles and opens them as an environment. */
async function sampleTasksEnvironment(page: Page): Promise<void> {
  await openStudio(page, 'documents');
  await page.getByTestId('document-add-sample').click();
  await page.getByTestId('synthesis-start').click();
  await page.getByTestId('synthesis-report').waitFor({ timeout: 30_000 });
}

describe('studio', () => {
  test('tasks from documents: candidates kept and rejected with reasons, then opened as an environment', async () => {
    const { context, page, pageErrors } = await openPage(browser(), appUrl);
    await waitForEditor(page);
    await openStudio(page, 'documents');
    await page.getByTestId('synthesis-start').click();
    expect(await page.getByTestId('synthesis-error').textContent()).toContain('Add a document first');
    // Files: an empty one is refused by name; a Markdown one is added.
    await page.getByTestId('document-files').setInputFiles([
      { name: 'empty.md', mimeType: 'text/markdown', buffer: Buffer.from('  \n') },
      { name: 'notes.md', mimeType: 'text/markdown', buffer: Buffer.from('# Notes\n\nThe ferry to Kells leaves at 7 every weekday morning from the old pier.\n') },
    ]);
    await expect.poll(() => page.getByTestId('synthesis-error').textContent()).toContain('"empty.md" is empty');
    await expect.poll(() => page.getByTestId('document-list').textContent()).toContain('notes.md');
    expect(await page.getByTestId('document-list').textContent()).not.toContain('empty.md');
    // A pasted document and the sample (which repeats a sentence: its second question is a rejected duplicate).
    await page.getByTestId('document-paste').fill('The committee meets on 14 March in the Granary Hall every spring season.');
    await page.getByTestId('document-add-pasted').click();
    await sampleTasksEnvironment(page);
    const rows = page.getByTestId('candidate-row');
    const kept = await page.locator('[data-testid="candidate-row"][data-kept="true"]').count();
    const total = await rows.count();
    expect(kept).toBeGreaterThanOrEqual(6);
    expect(total).toBeGreaterThan(kept);
    // Every rejected candidate says why.
    const reasons = await page.locator('[data-testid="candidate-row"][data-kept="false"] [data-testid="candidate-reason"]').allTextContents();
    expect(reasons.length).toBe(total - kept);
    expect(reasons.every((reason) => reason.trim().length > 0)).toBe(true);
    expect(reasons).toContain('the same question was proposed before');
    expect(await page.getByTestId('synthesis-report').textContent()).toContain(`${kept} kept`);
    await page.getByTestId('synthesis-report').scrollIntoViewIfNeeded();
    await screenshot(page, 'studio-documents');
    await page.setViewportSize({ width: 800, height: 720 });
    await screenshot(page, 'studio-documents-800');
    await page.setViewportSize({ width: 1280, height: 720 });
    await page.getByTestId('synthesis-open').click();
    await waitForEditor(page, 'closed-book questions');
    await expect.poll(() => page.getByTestId('environment-picker').locator('option:checked').textContent()).toBe('studio-tasks');
    await expect.poll(() => page.getByTestId('problems').textContent(), { timeout: 20_000 }).toBe('No problems');
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  test('a generator that never answers can be cancelled: the run ends without an error and can start again', async () => {
    const { context, page } = await openPage(browser(), appUrl);
    await page.route('http://hang.invalid/v1/chat/completions', () => { /* never answered */ });
    await waitForEditor(page);
    await page.getByTestId('judge-endpoint').click();
    await fillFields(page, { 'judge-base-url': 'http://hang.invalid/v1' });
    await openStudio(page, 'documents');
    await page.getByTestId('document-add-sample').click();
    await page.getByTestId('studio-generator').selectOption('judge');
    await page.getByTestId('synthesis-start').click();
    await page.getByTestId('synthesis-cancel').click();
    await page.getByTestId('synthesis-start').waitFor({ timeout: 10_000 });
    expect(await page.getByTestId('synthesis-error').count()).toBe(0);
    await context.close();
  });

  test('traces: tasks from a chat log, duplicates merged, malformed lines reported by number', async () => {
    const { context, page } = await openPage(browser(), appUrl);
    await waitForEditor(page);
    await openStudio(page, 'traces');
    const lines = [
      JSON.stringify({ messages: [{ role: 'user', content: 'How do I reset my password?' }, { role: 'assistant', content: 'Use the "Forgot password" link.' }] }),
      JSON.stringify({ messages: [{ role: 'user', content: 'How do I reset my password?' }, { role: 'assistant', content: 'Click "Forgot password".' }] }),
      JSON.stringify({ prompt: [{ role: 'user', content: 'Where is my invoice?' }], completion: [{ role: 'assistant', content: 'Under Billing.' }] }),
      '{not json',
      JSON.stringify({ hello: 'world' }),
      JSON.stringify({ messages: [{ role: 'user', content: 'Can I change my plan?' }, { role: 'assistant', content: 'Yes, in Settings.' }] }),
    ];
    await page.getByTestId('traces-file').setInputFiles({ name: 'support.jsonl', mimeType: 'application/x-ndjson', buffer: Buffer.from(lines.join('\n')) });
    await page.getByTestId('traces-summary').waitFor();
    const summary = await page.getByTestId('traces-summary').textContent();
    expect(summary).toContain('6 lines');
    expect(summary).toContain('3 tasks');
    expect(summary).toContain('1 duplicates merged');
    expect(summary).toContain('2 skipped');
    const skipped = await page.getByTestId('traces-skipped').locator('li').allTextContents();
    expect(skipped.map((line) => line.split(':')[0])).toEqual(['line 4', 'line 5']);
    expect(await page.getByTestId('trace-task-row').count()).toBe(3);
    await screenshot(page, 'studio-traces');
    await page.getByTestId('traces-open').click();
    await waitForEditor(page, 'trace-tasks');
    await context.close();
  });

  test('traces with tool calls open as a tool environment (its tools answer from the recorded calls) that compiles', async () => {
    const { context, page } = await openPage(browser(), appUrl);
    await waitForEditor(page);
    await openStudio(page, 'traces');
    const parcelTraces = readFileSync(new URL('../../docs/examples/parcel-desk-traces.jsonl', import.meta.url));
    await page.getByTestId('traces-file').setInputFiles({ name: 'parcel-desk-traces.jsonl', mimeType: 'application/x-ndjson', buffer: parcelTraces });
    await page.getByTestId('traces-summary').waitFor();
    expect(await page.getByTestId('traces-summary').textContent()).toContain('34 tasks');
    await page.getByTestId('traces-open').click();
    await waitForEditor(page, 'trace-tasks: tool-using tasks');
    await expect.poll(() => page.getByTestId('problems').textContent(), { timeout: 30_000 }).toBe('No problems');
    await context.close();
  });

  test('simulated tools: fidelity per round with the scripted simulator, tasks planted backwards (all 8 kept by the offline solver) opened as an environment that compiles', async () => {
    const { context, page } = await openPage(browser(), appUrl);
    await waitForEditor(page);
    await openStudio(page, 'traces');
    // The sample trace log shipped with the app (docs/examples/parcel-desk-traces.jsonl).
    await page.getByTestId('traces-add-sample').click();
    await page.getByTestId('tools-fidelity').click();
    // The numbers of tabrl simulate --simulator-model heuristic --rounds 2 on the same log (docs/environment-studio.md).
    await expect.poll(() => page.getByTestId('tools-fidelity-row').count(), { timeout: 20_000 }).toBe(8);
    const rows = await page.getByTestId('tools-fidelity-row').allTextContents();
    expect(rows[3]).toBe('1all tools1377%82%—');
    expect(rows[7]).toBe('2all tools1377%82%—');
    await screenshot(page, 'studio-simulated-tools');
    await page.getByTestId('tools-plant').click();
    await waitForEditor(page, 'planted-tasks: tool-using tasks');
    await expect.poll(() => page.getByTestId('problems').textContent(), { timeout: 30_000 }).toBe('No problems');
    await openStudio(page, 'traces');
    expect(await page.getByTestId('tools-planted').textContent()).toContain('kept 8');
    await context.close();
  });

  test("the tab's own tool simulator: an endpoint picked in the Tool simulator card answers lesson 7's tools, and the evaluation records it", async () => {
    const { context, page, pageErrors } = await openPage(browser(), appUrl);
    await waitForEditor(page);
    await page.getByTestId('lesson-picker').selectOption('7');
    await page.getByTestId('lesson-start').click();
    await waitForEditor(page, 'Lesson 7: an agent for a tool you cannot call');
    const json = { 'content-type': 'application/json', 'access-control-allow-origin': '*' };
    // The simulator endpoint: one record for any call, a parcel the traces never had at that place.
    const simulatorPrompts: string[] = [];
    await page.route('http://simulator.invalid/v1/chat/completions', (route) => {
      simulatorPrompts.push(String(JSON.parse(route.request().postData() ?? '{}').messages?.[0]?.content ?? ''));
      return route.fulfill({ status: 200, headers: json, body: JSON.stringify({ id: 's', object: 'chat.completion', model: 'sim-m', choices: [{ index: 0, message: { role: 'assistant', content: '{"tracking_id":"PX-1005","status":"lost","location":"Oslo hub","eta":"2026-04-01"}' }, finish_reason: 'stop' }] }) });
    });
    // The policy endpoint: tracks PX-1005 (recorded in the traces, planted in no task), then answers with the location it was told.
    const toolReplies: string[] = [];
    await page.route('http://policy.invalid/v1/chat/completions', (route) => {
      const messages = JSON.parse(route.request().postData() ?? '{}').messages as Array<{ role: string; content: string }>;
      const tool = messages.findLast((message) => message.role === 'tool');
      if (tool) toolReplies.push(tool.content);
      const message = tool
        ? { role: 'assistant', content: String(JSON.parse(tool.content).location) }
        : { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'track_parcel', arguments: '{"tracking_id":"PX-1005"}' } }] };
      return route.fulfill({ status: 200, headers: json, body: JSON.stringify({ id: 'p', object: 'chat.completion', model: 'm', choices: [{ index: 0, message, finish_reason: tool ? 'stop' : 'tool_calls' }] }) });
    });
    await page.getByTestId('policy-endpoint').click();
    await fillFields(page, { 'endpoint-base-url': 'http://policy.invalid/v1' });
    // The lesson's file takes a simulator, so the card is there; nothing is lent until one is picked.
    expect(await page.getByTestId('simulator-kind-lent').textContent()).toContain('Nothing is lent');
    await page.getByTestId('simulator-kind').selectOption('endpoint');
    await fillFields(page, { 'simulator-base-url': 'http://simulator.invalid/v1', 'simulator-model': 'sim-m' });
    expect(await page.getByTestId('simulator-kind-lent').textContent()).toContain('endpoint sim-m at http://simulator.invalid/v1 as args.simulatorClient');
    await fillFields(page, { 'setting-numTasks': '2', 'setting-rolloutsPerTask': '1' });
    await page.getByTestId('evaluate').click();
    await waitForSummary(page);
    expect(await page.getByTestId('run-simulator').textContent()).toBe('simulator: endpoint sim-m at http://simulator.invalid/v1');
    expect(simulatorPrompts).toHaveLength(2);
    expect(simulatorPrompts[0]).toContain('You simulate the tool "track_parcel"');
    expect(toolReplies).toEqual([expect.stringContaining('Oslo hub'), expect.stringContaining('Oslo hub')]);
    await page.getByTestId('run-simulator').scrollIntoViewIfNeeded();
    await screenshot(page, 'simulator-run-summary');
    await page.getByTestId('simulator-panel').scrollIntoViewIfNeeded();
    await screenshot(page, 'simulator-card-endpoint');
    // The Studio's Simulated tools card shows the same choice.
    await openStudio(page, 'traces');
    await page.getByTestId('traces-add-sample').click();
    expect(await page.getByTestId('studio-simulator').inputValue()).toBe('endpoint');
    await page.getByTestId('studio-simulator').scrollIntoViewIfNeeded();
    await screenshot(page, 'studio-simulator-choice');
    // Back to the offline simulator: the next evaluation lends none and records none.
    await page.getByTestId('studio-simulator').selectOption('heuristic');
    await page.getByTestId('tab-editor').click();
    await page.getByTestId('evaluate').click();
    await expect.poll(() => toolReplies.length, { timeout: 60_000 }).toBe(4);
    await waitForSummary(page);
    await expect.poll(() => page.getByTestId('run-simulator').textContent()).toBe('simulator: none lent (the file’s own)');
    expect(toolReplies.slice(2)).toEqual([expect.stringContaining('Turin hub'), expect.stringContaining('Turin hub')]);
    expect(simulatorPrompts).toHaveLength(2);
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  test('calibration of the generated file against the scripted student: labels, histogram, Use learnable tasks', async () => {
    const { context, page, pageErrors } = await openPage(browser(), appUrl);
    await waitForEditor(page);
    await sampleTasksEnvironment(page);
    const kept = await page.locator('[data-testid="candidate-row"][data-kept="true"]').count();
    await page.getByTestId('synthesis-open').click();
    await waitForEditor(page, 'closed-book questions');
    await openStudio(page, 'calibrate');
    await page.getByTestId('calibration-policy').selectOption('student');
    await fillFields(page, { 'calibration-tasks': '50', 'calibration-k': '8' });
    await page.getByTestId('calibration-start').click();
    await page.getByTestId('calibration-histogram').waitFor({ timeout: 60_000 });
    expect(await page.getByTestId('calibration-row').count()).toBe(kept);
    const counts = await page.getByTestId('calibration-counts').textContent();
    for (const label of ['too hard', 'learnable', 'too easy']) expect(counts).toMatch(new RegExp(`${label} [1-9]`));
    const learnable = await page.locator('[data-testid="calibration-row"][data-label="learnable"]').count();
    await screenshot(page, 'studio-calibration');
    await page.setViewportSize({ width: 800, height: 720 });
    await screenshot(page, 'studio-calibration-800');
    await page.setViewportSize({ width: 1280, height: 720 });
    await page.getByTestId('calibration-use').click();
    await waitForEditor(page, 'closed-book questions');
    await expect.poll(() => page.getByTestId('environment-picker').locator('option:checked').textContent()).toBe('studio-tasks (learnable)');
    await expect.poll(() => page.getByTestId('problems').textContent(), { timeout: 20_000 }).toBe('No problems');
    expect(learnable).toBeGreaterThan(0);
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  test("the Audit panel catches lesson 4's hack and its criteria, added to the file as a gate on the reward, make the hack fail", async () => {
    const { context, page, pageErrors } = await openPage(browser(), appUrl);
    await waitForEditor(page);
    await page.getByTestId('lesson-picker').selectOption('4');
    await page.getByTestId('lesson-start').click();
    await waitForEditor(page, 'Lesson 4: a judge that can be fooled');
    // The hack, typed as the policy: one long line of poetic words (an endpoint answered here).
    await page.route('http://policy.invalid/v1/chat/completions', (route) => route.fulfill({
      status: 200,
      headers: { 'content-type': 'application/json', 'access-control-allow-origin': '*' },
      body: JSON.stringify({ id: 'p', object: 'chat.completion', model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'Golden dreams whisper softly, gentle silver gleams glow in golden dreams and soft gentle whispers forever and ever in the golden night' }, finish_reason: 'stop' }] }),
    }));
    await page.getByTestId('policy-endpoint').click();
    await page.locator('input[placeholder="http://localhost:8000/v1"]').first().fill('http://policy.invalid/v1');
    await fillFields(page, { 'setting-numTasks': '4', 'setting-rolloutsPerTask': '1' });
    await page.getByTestId('evaluate').click();
    await waitForSummary(page);
    expect(await page.getByTestId('pass-rate').textContent()).toBe('100.0%');
    await openStudio(page, 'audit');
    await page.getByTestId('audit-start').click();
    await page.getByTestId('audit-summary').waitFor({ timeout: 30_000 });
    expect(await page.getByTestId('audit-summary').textContent()).toContain('4 flagged');
    expect(await page.getByTestId('audit-findings').textContent()).toContain('metric-disagrees');
    await page.getByTestId('criteria-propose').click();
    await page.getByTestId('criteria-list').waitFor({ timeout: 30_000 });
    expect(await page.getByTestId('criterion-accept').count()).toBeGreaterThanOrEqual(2);
    await page.getByTestId('audit-flagged').scrollIntoViewIfNeeded();
    await screenshot(page, 'studio-audit');
    await page.setViewportSize({ width: 800, height: 720 });
    await screenshot(page, 'studio-audit-800');
    await page.setViewportSize({ width: 1280, height: 720 });
    await page.getByTestId('criteria-add').click();
    await expect.poll(() => page.getByTestId('environment-picker').locator('option:checked').textContent()).toBe('Lesson 4 · gullible judge + criteria');
    await waitForEditor(page, "import { CriteriaRubric, gateByCriteria, HeuristicStudioClient } from 'tabrl/studio';");
    await expect.poll(() => page.getByTestId('problems').textContent(), { timeout: 20_000 }).toBe('No problems');
    // The hack earns none of the criteria, and they gate the reward: the gullible judge still pays 1, but the reward is 0 and nothing passes.
    await page.getByTestId('evaluate').click();
    await waitForSummary(page);
    const summary = (await page.getByTestId('summary').textContent()) ?? '';
    // Each criterion's row: name, weight 1, mean 0.000; the judge's row: weight 1, mean 1.000.
    expect(summary).toMatch(/criterion_uses_required_word\s*1\s*0\.000/);
    expect(summary).toMatch(/judgeReward\s*1\s*1\.000/);
    expect(await page.getByTestId('reward-mean').textContent()).toMatch(/^0\.000/);
    expect(await page.getByTestId('pass-rate').textContent()).toBe('0.0%');
    await screenshot(page, 'studio-audit-gated');
    await openStudio(page, 'audit');
    expect(await page.getByTestId('criteria-note').textContent()).toContain('criteria judged by the Judge card');
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  test("lesson 5's last step: its judged-writing file, evaluated by the expert, passes the audit with nothing flagged", async () => {
    const { context, page, pageErrors } = await openPage(browser(), appUrl);
    await waitForEditor(page);
    await page.getByTestId('lesson-picker').selectOption('5');
    await expect.poll(() => page.getByTestId('lesson-title').textContent()).toBe('From your documents to a calibrated environment');
    await page.getByTestId('lesson-start').click();
    await waitForEditor(page, 'A short creative-writing task');
    await expect.poll(() => page.getByTestId('environment-picker').locator('option:checked').textContent()).toBe('Lesson 5 · judged-writing');
    await page.getByTestId('evaluate').click();
    await waitForSummary(page);
    expect(await page.getByTestId('pass-rate').textContent()).toBe('100.0%');
    await openStudio(page, 'audit');
    await page.getByTestId('audit-start').click();
    await page.getByTestId('audit-summary').waitFor({ timeout: 30_000 });
    expect(await page.getByTestId('audit-summary').textContent()).toContain('0 flagged');
    expect(await page.getByTestId('audit-clean').count()).toBe(1);
    await screenshot(page, 'lesson-5-audit');
    expect(pageErrors).toEqual([]);
    await context.close();
  });
});
