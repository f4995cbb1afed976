/** The playground shell: top bar; the editor, the rollout viewer or the training view on the left; the run, policy and settings on the right. */
import { useEffect, useState } from 'react';
import { ChatView } from '../features/chat/ChatView.tsx';
import { SegmentedChoice } from '../kit/SegmentedChoice.tsx';
import { ErrorBoundary } from '../kit/ErrorBoundary.tsx';
import { FirstVisitHint } from './FirstVisitHint.tsx';
import { EnvironmentEditor } from '../features/environment/EnvironmentEditor.tsx';
import { ImportExportPanel } from '../features/transfer/ImportExportPanel.tsx';
import { PolicyPanel } from '../features/policy/PolicyPanel.tsx';
import { ProblemsStrip } from '../features/environment/ProblemsStrip.tsx';
import { ReviewDialog } from '../features/share/ReviewDialog.tsx';
import { RolloutViewer } from '../features/evaluation/RolloutViewer.tsx';
import { RunPanel } from '../features/evaluation/RunPanel.tsx';
import { SettingsPanel } from '../features/evaluation/SettingsPanel.tsx';
import { TopBar } from './TopBar.tsx';
import { TrainingSettingsPanel } from '../features/training/TrainingSettingsPanel.tsx';
import { TrainingView } from '../features/training/TrainingView.tsx';
import { RunsView } from '../features/runs/RunsView.tsx';
import { JudgePanel } from '../features/judge/JudgePanel.tsx';
import { SimulatorPanel } from '../features/judge/SimulatorPanel.tsx';
import { StudioView } from '../features/studio/StudioView.tsx';
import { LessonPanel } from '../features/lessons/LessonPanel.tsx';
import { followLessonLink } from '../features/lessons/lesson-actions.ts';
import { usePlayground } from '../store/index.ts';

type MainView = 'editor' | 'rollouts' | 'training' | 'runs' | 'chat' | 'studio';

/** The whole page. */
export function App() {
  const [view, setView] = useState<MainView>('editor');
  const rollouts = usePlayground((state) => state.run.records.length);
  const mode = usePlayground((state) => state.mode);
  const presenter = usePlayground((state) => state.lessonView.presenter);
  const lessonOpen = usePlayground((state) => state.lessonView.openLessonId !== null || state.lessonView.linkError !== null);
  useEffect(() => {
    followLessonLink(location.hash);
    const onHash = () => followLessonLink(location.hash);
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);
  useEffect(() => {
    document.documentElement.classList.toggle('presenter', presenter);
  }, [presenter]);
  return (
    <div className={presenter ? 'app presenter' : 'app'}>
      <TopBar />
      <FirstVisitHint />
      <div className={lessonOpen ? 'workspace with-lesson' : 'workspace'}>
        <ErrorBoundary area="The lesson panel">
          <LessonPanel />
        </ErrorBoundary>
        <main className="main-pane">
          <SegmentedChoice
            options={[
              { value: 'editor', label: 'Environment' },
              { value: 'rollouts', label: `Rollouts${rollouts > 0 ? ` (${rollouts})` : ''}` },
              { value: 'training', label: 'Training' },
              { value: 'runs', label: 'Runs' },
              { value: 'chat', label: 'Chat' },
              { value: 'studio', label: 'Studio' },
            ]}
            value={view}
            onChange={setView}
            kind="tab"
            label="Views"
            testIdPrefix="tab"
            className="tabs"
          />
          <div className="editor-view" hidden={view !== 'editor'}>
            <ErrorBoundary area="The Environment tab">
              <EnvironmentEditor />
              <ProblemsStrip />
            </ErrorBoundary>
          </div>
          {/* Each tab has its own boundary (keyed by tab), so a failure in one leaves the others and the side pane working. */}
          {view === 'rollouts' && (
            <ErrorBoundary key="rollouts" area="The Rollouts tab">
              <RolloutViewer />
            </ErrorBoundary>
          )}
          {view === 'training' && (
            <ErrorBoundary key="training" area="The Training tab">
              <TrainingView onShowRuns={() => setView('runs')} />
            </ErrorBoundary>
          )}
          {view === 'chat' && (
            <ErrorBoundary key="chat" area="The Chat tab">
              <ChatView />
            </ErrorBoundary>
          )}
          {view === 'studio' && (
            <ErrorBoundary key="studio" area="The Studio tab">
              <StudioView onOpenedEnvironment={() => setView('editor')} />
            </ErrorBoundary>
          )}
          {view === 'runs' && (
            <ErrorBoundary key="runs" area="The Runs tab">
              <RunsView onOpened={() => setView('training')} />
            </ErrorBoundary>
          )}
        </main>
        <aside className="side-pane">
          <ErrorBoundary area="The run panel">
            <RunPanel onShowRollouts={() => setView('rollouts')} onShowTraining={() => setView('training')} />
          </ErrorBoundary>
          {mode !== 'evaluate' && (
            <ErrorBoundary area="The training settings">
              <TrainingSettingsPanel mode={mode} />
            </ErrorBoundary>
          )}
          <ErrorBoundary area="The policy card">
            <PolicyPanel />
          </ErrorBoundary>
          <ErrorBoundary area="The judge card">
            <JudgePanel />
          </ErrorBoundary>
          <ErrorBoundary area="The tool simulator card">
            <SimulatorPanel />
          </ErrorBoundary>
          <ErrorBoundary area="The settings">
            <SettingsPanel />
          </ErrorBoundary>
          <ErrorBoundary area="The files card">
            <ImportExportPanel />
          </ErrorBoundary>
        </aside>
      </div>
      <ReviewDialog />
    </div>
  );
}
