/** The GRPO card's "Task synthesis during training" rows: on or off, the documents (the Studio's, or files added here), the generator, the keep band, the refresh interval, attempts per task and the pool's rules, with `tabrl train --synth-docs`'s defaults. */
import type { ChangeEvent } from 'react';
import type { RetireLimit } from '../../../envs/studio/index.ts';
import { usePlayground } from '../../store/index.ts';
import { NumberSetting, Setting } from '../../kit/Setting.tsx';
import { DEFAULT_POOL_SYNTHESIS, type PoolGeneratorSource, type PoolSynthesisSettings as Settings } from './pool-synthesis.ts';

/** The rows, under the GRPO settings; an unfinished job goes on with the settings it started with. */
export function PoolSynthesisSettings() {
  const settings = usePlayground((state) => state.poolSynthesis);
  const setPoolSynthesis = usePlayground((state) => state.setPoolSynthesis);
  const documents = usePlayground((state) => state.studio.documents);
  const set = (update: Partial<Settings>) => setPoolSynthesis({ ...(settings ?? DEFAULT_POOL_SYNTHESIS), ...update });
  return (
    <details className="settings-more" data-testid="pool-synthesis" open={settings !== null}>
      <summary>Task synthesis during training</summary>
      <label className="setting-check">
        <input type="checkbox" data-testid="pool-synthesis-on" checked={settings !== null} onChange={(event) => setPoolSynthesis(event.target.checked ? DEFAULT_POOL_SYNTHESIS : null)} />
        Synthesise tasks from documents during training
      </label>
      <p className="hint">
        Every N steps new tasks are written from the documents and solved k times by the policy being trained (its weights after the step); they join the pool only in the keep band, and mastered tasks
        retire.
      </p>
      {settings && (
        <>
          <p className="hint pool-synthesis-documents" data-testid="pool-synthesis-documents">
            {documents.length === 0
              ? 'No documents yet: add .md or .txt files here or in the Studio tab (Documents).'
              : `${documents.length} document${documents.length === 1 ? '' : 's'} from the Studio: ${documents.map((document) => document.name).join(', ')}; one per refresh, in turn.`}{' '}
            <input type="file" multiple accept=".md,.txt,text/plain,text/markdown" data-testid="pool-synthesis-files" aria-label="Add documents" onChange={(event) => void addFiles(event)} />
          </p>
          <div className="settings-grid">
            <Setting
              label="Generator"
              help="Who writes new tasks from the documents and checks each against its passage: the offline heuristic rules, or the Judge card's model (an endpoint, WebLLM or the in-tab model)."
            >
              <select data-testid="pool-synthesis-generator" value={settings.generator} onChange={(event) => set({ generator: event.target.value as PoolGeneratorSource })}>
                <option value="heuristic">Offline heuristic</option>
                <option value="judge">The Judge card's model</option>
              </select>
            </Setting>
            <NumberSetting
              field={{ key: 'keepLo', label: 'Keep band: low', help: 'New tasks join when the policy passes them at least this often (default 0.2).', min: 0, max: 1, step: 0.05 }}
              value={settings.keep[0]}
              testId="pool-synthesis-keep-lo"
              onChange={(lo) => set({ keep: [lo, settings.keep[1]] })}
            />
            <NumberSetting
              field={{
                key: 'keepHi',
                label: 'Keep band: high',
                help: 'New tasks join below this pass rate; pooled tasks passed this often or more are mastered and may retire (default 0.8).',
                min: 0,
                max: 1,
                step: 0.05,
              }}
              value={settings.keep[1]}
              testId="pool-synthesis-keep-hi"
              onChange={(hi) => set({ keep: [settings.keep[0], hi] })}
            />
            <NumberSetting
              field={{ key: 'every', label: 'Refresh every', help: 'GRPO steps between refreshes (default 10).', min: 1, max: 100_000 }}
              value={settings.every}
              testId="pool-synthesis-every"
              onChange={(every) => set({ every })}
            />
            <NumberSetting
              field={{ key: 'k', label: 'Attempts per task', help: 'Rollouts of the policy per task at each refresh (default 4).', min: 1, max: 64 }}
              value={settings.k}
              testId="pool-synthesis-k"
              onChange={(k) => set({ k })}
            />
            <NumberSetting
              field={{ key: 'minPool', label: 'Minimum pool', help: `Never retire below this many tasks (default ${DEFAULT_POOL_SYNTHESIS.rules.minPool}).`, min: 1, max: 100_000 }}
              value={settings.rules.minPool}
              testId="pool-synthesis-min-pool"
              onChange={(minPool) => set({ rules: { ...settings.rules, minPool } })}
            />
            <Setting label="Most retired per refresh" help="joined: no more than join at the same refresh (new and replayed), so the pool never shrinks (default); all; or a number.">
              <select
                data-testid="pool-synthesis-max-retire"
                value={String(settings.rules.maxRetire)}
                onChange={(event) => set({ rules: { ...settings.rules, maxRetire: retireLimit(event.target.value) } })}
              >
                {RETIRE_LIMITS.map((limit) => (
                  <option key={limit} value={limit}>
                    {limit === 'joined' ? 'joined (default)' : limit}
                  </option>
                ))}
              </select>
            </Setting>
            <NumberSetting
              field={{
                key: 'replay',
                label: 'Replay',
                help: `Retired tasks re-measured per refresh, oldest first; those no longer mastered rejoin (default ${DEFAULT_POOL_SYNTHESIS.rules.replay}; 0: never).`,
                min: 0,
                max: 100_000,
              }}
              value={settings.rules.replay}
              testId="pool-synthesis-replay"
              onChange={(replay) => set({ rules: { ...settings.rules, replay } })}
            />
          </div>
        </>
      )}
    </details>
  );
}

/** The retire limits offered: as many as join, every mastered task, or a fixed number. */
const RETIRE_LIMITS = ['joined', 'all', '0', '1', '2', '4', '8'];

/** A retire limit from its option's value. */
function retireLimit(value: string): RetireLimit {
  return value === 'joined' || value === 'all' ? value : Number(value);
}

/** Adds the chosen files to the Studio's documents (the same list the Studio tab shows). */
async function addFiles(event: ChangeEvent<HTMLInputElement>): Promise<void> {
  const files = [...(event.target.files ?? [])];
  const added = await Promise.all(files.map(async (file) => ({ name: file.name, text: await file.text() })));
  usePlayground.getState().setStudio((state) => ({ documents: [...state.documents, ...added.filter((document) => document.text.trim() !== '')] }));
  event.target.value = '';
}
