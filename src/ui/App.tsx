/** The playground shell: top bar; the editor, the rollout viewer or the training view on the left; the run, policy and settings on the right. */
import { useEffect, useState } from 'react';
import { ChatView } from './components/ChatView.tsx';
import { EnvironmentEditor } from './editor/EnvironmentEditor.tsx';
import { ImportExportPanel } from './components/ImportExportPanel.tsx';
import { PolicyPanel } from './components/PolicyPanel.tsx';
import { ProblemsStrip } from './components/ProblemsStrip.tsx';
import { ReviewDialog } from './components/ReviewDialog.tsx';
import { RolloutViewer } from './components/RolloutViewer.tsx';
import { RunPanel } from './components/RunPanel.tsx';
import { SettingsPanel } from './components/SettingsPanel.tsx';
import { TopBar } from './components/TopBar.tsx';
import { TrainingSettingsPanel } from './components/TrainingSettingsPanel.tsx';
import { TrainingView } from './components/TrainingView.tsx';
import { RunsView } from './components/RunsView.tsx';
import { LessonPanel } from './lessons/LessonPanel.tsx';
import { openLessonFromHash, useLessonView } from './lessons/lesson-state.ts';
import { usePlayground } from './store/index.ts';

type MainView = 'editor' | 'rollouts' | 'training' | 'runs' | 'chat';

/** The whole page. */
export function App() {
  const [view, setView] = useState<MainView>('editor');
  const rollouts = usePlayground((state) => state.run.records.length);
  const mode = usePlayground((state) => state.mode);
  const presenter = useLessonView((state) => state.presenter);
  const lessonOpen = useLessonView((state) => state.openLessonId !== null || state.linkError !== null);
  useEffect(() => {
    openLessonFromHash(location.hash);
    const onHash = () => openLessonFromHash(location.hash);
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);
  useEffect(() => {
    document.documentElement.classList.toggle('presenter', presenter);
  }, [presenter]);
  return (
    <div className={presenter ? 'app presenter' : 'app'}>
      <TopBar />
      <div className={lessonOpen ? 'workspace with-lesson' : 'workspace'}>
        <LessonPanel />
        <main className="main-pane">
          <div className="tabs" role="tablist">
            <button type="button" role="tab" aria-selected={view === 'editor'} className={view === 'editor' ? 'selected' : ''} onClick={() => setView('editor')} data-testid="tab-editor">Environment</button>
            <button type="button" role="tab" aria-selected={view === 'rollouts'} className={view === 'rollouts' ? 'selected' : ''} onClick={() => setView('rollouts')} data-testid="tab-rollouts">Rollouts{rollouts > 0 ? ` (${rollouts})` : ''}</button>
            <button type="button" role="tab" aria-selected={view === 'training'} className={view === 'training' ? 'selected' : ''} onClick={() => setView('training')} data-testid="tab-training">Training</button>
            <button type="button" role="tab" aria-selected={view === 'runs'} className={view === 'runs' ? 'selected' : ''} onClick={() => setView('runs')} data-testid="tab-runs">Runs</button>
            <button type="button" role="tab" aria-selected={view === 'chat'} className={view === 'chat' ? 'selected' : ''} onClick={() => setView('chat')} data-testid="tab-chat">Chat</button>
          </div>
          <div className="editor-view" hidden={view !== 'editor'}>
            <EnvironmentEditor />
            <ProblemsStrip />
          </div>
          {view === 'rollouts' && <RolloutViewer />}
          {view === 'training' && <TrainingView onShowRuns={() => setView('runs')} />}
          {view === 'chat' && <ChatView />}
          {view === 'runs' && <RunsView onOpened={() => setView('training')} />}
        </main>
        <aside className="side-pane">
          <RunPanel onShowRollouts={() => setView('rollouts')} onShowTraining={() => setView('training')} />
          {mode !== 'evaluate' && <TrainingSettingsPanel mode={mode} />}
          <PolicyPanel />
          <SettingsPanel />
          <ImportExportPanel />
        </aside>
      </div>
      <ReviewDialog />
    </div>
  );
}
