/** The playground shell: top bar; the editor or the rollout viewer on the left; policy, settings and the run on the right. */
import { useState } from 'react';
import { EnvironmentEditor } from './editor/EnvironmentEditor.tsx';
import { PolicyPanel } from './components/PolicyPanel.tsx';
import { ProblemsStrip } from './components/ProblemsStrip.tsx';
import { ReviewDialog } from './components/ReviewDialog.tsx';
import { RolloutViewer } from './components/RolloutViewer.tsx';
import { RunPanel } from './components/RunPanel.tsx';
import { SettingsPanel } from './components/SettingsPanel.tsx';
import { TopBar } from './components/TopBar.tsx';
import { usePlayground } from './store/index.ts';

type MainView = 'editor' | 'rollouts';

/** The whole page. */
export function App() {
  const [view, setView] = useState<MainView>('editor');
  const rollouts = usePlayground((state) => state.run.records.length);
  return (
    <div className="app">
      <TopBar />
      <div className="workspace">
        <main className="main-pane">
          <div className="tabs" role="tablist">
            <button type="button" role="tab" aria-selected={view === 'editor'} className={view === 'editor' ? 'selected' : ''} onClick={() => setView('editor')} data-testid="tab-editor">Environment</button>
            <button type="button" role="tab" aria-selected={view === 'rollouts'} className={view === 'rollouts' ? 'selected' : ''} onClick={() => setView('rollouts')} data-testid="tab-rollouts">Rollouts{rollouts > 0 ? ` (${rollouts})` : ''}</button>
          </div>
          <div className="editor-view" hidden={view !== 'editor'}>
            <EnvironmentEditor />
            <ProblemsStrip />
          </div>
          {view === 'rollouts' && <RolloutViewer />}
        </main>
        <aside className="side-pane">
          <RunPanel onShowRollouts={() => setView('rollouts')} />
          <PolicyPanel />
          <SettingsPanel />
        </aside>
      </div>
      <ReviewDialog />
    </div>
  );
}
