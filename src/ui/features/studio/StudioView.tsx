/**
 * The Studio tab: building an environment where no checker exists. Seven sections — tasks from
 * documents, tasks from traces, calibration of the open environment, the audit of its rollouts, a
 * judge panel, a red team of its reward, and the review queue over what they found — each a card
 * driven by its actions module (studio-actions.ts, judge-panel-actions.ts, red-team-actions.ts,
 * review-actions.ts).
 */
import { SegmentedChoice, type SegmentedOption } from '../../kit/SegmentedChoice.tsx';
import { AuditPanel } from './AuditPanel.tsx';
import { CalibrationPanel } from './CalibrationPanel.tsx';
import { DocumentsPanel } from './DocumentsPanel.tsx';
import { JudgesPanel } from './JudgesPanel.tsx';
import { RedTeamPanel } from './RedTeamPanel.tsx';
import { ReviewPanel } from './ReviewPanel.tsx';
import { TracesPanel } from './TracesPanel.tsx';
import type { StudioSection } from './studio-slice.ts';
import './studio.css';
import { usePlayground } from '../../store/index.ts';

const SECTIONS: SegmentedOption<StudioSection>[] = [
  { value: 'documents', label: 'Tasks from documents' },
  { value: 'traces', label: 'Tasks from traces' },
  { value: 'calibrate', label: 'Calibrate' },
  { value: 'audit', label: 'Audit' },
  { value: 'panel', label: 'Judge panel' },
  { value: 'redteam', label: 'Red team' },
  { value: 'review', label: 'Review' },
];

/** The Studio tab; `onOpenedEnvironment` shows the editor after a new environment file was opened. */
export function StudioView({ onOpenedEnvironment }: { onOpenedEnvironment: () => void }) {
  const section = usePlayground((state) => state.studio.section);
  const setSection = (value: StudioSection) => usePlayground.getState().setStudio({ section: value });
  return (
    <div className="studio-view" data-testid="studio-view">
      <SegmentedChoice options={SECTIONS} value={section} onChange={setSection} kind="tab" label="Studio sections" testIdPrefix="studio-section" className="segmented studio-sections" />
      {section === 'documents' && <DocumentsPanel onOpened={onOpenedEnvironment} />}
      {section === 'traces' && <TracesPanel onOpened={onOpenedEnvironment} />}
      {section === 'calibrate' && <CalibrationPanel onOpened={onOpenedEnvironment} />}
      {section === 'audit' && <AuditPanel onOpened={onOpenedEnvironment} />}
      {section === 'panel' && <JudgesPanel />}
      {section === 'redteam' && <RedTeamPanel onOpened={onOpenedEnvironment} />}
      {section === 'review' && <ReviewPanel />}
    </div>
  );
}
