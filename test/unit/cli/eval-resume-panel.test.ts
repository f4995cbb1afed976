// `tabrl eval --resume` with `--judges FILE`: the same panel is accepted, another one is named as a conflict.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { conflictingResumeFlags } from '../../../src/cli/eval-resume-flags.ts';
import { readJudgePanelFile } from '../../../src/cli/judge-panel-file.ts';

const PANEL = { aggregation: 'majority', judges: [{ name: 'a', baseUrl: 'http://127.0.0.1:9/v1', model: 'm1' }, { name: 'b', baseUrl: 'http://127.0.0.1:9/v1', model: 'm2' }] };

function panelFile(dir: string, name: string, panel: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(panel));
  return path;
}

test('a resumed evaluation accepts its own --judges panel and names a different one', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tabrl-resume-panel-'));
  const same = panelFile(dir, 'same.json', PANEL);
  const other = panelFile(dir, 'other.json', { ...PANEL, aggregation: 'mean' });
  const saved = {
    environment: 'reverse-text',
    environment_name: 'reverse-text',
    env_args: {},
    model: 'm',
    base_url: 'http://127.0.0.1:9/v1',
    num_tasks: 2,
    rollouts_per_task: 1,
    sampling_args: {},
    concurrency: 1,
    judge_panel: readJudgePanelFile(same),
  };
  const parseColumns = (text: string) => text.split(',');
  expect(conflictingResumeFlags({ judges: same }, [], saved, dir, parseColumns)).toEqual([]);
  const conflicts = conflictingResumeFlags({ judges: other }, [], saved, dir, parseColumns);
  expect(conflicts).toHaveLength(1);
  expect(conflicts[0]).toContain(`--judges ${other} (the run's panel is majority of a, b)`);
  const { judge_panel: _dropped, ...withoutPanel } = saved;
  expect(conflictingResumeFlags({ judges: same }, [], withoutPanel, dir, parseColumns)[0]).toContain("the run's panel is none");
});
