/**
 * The Studio tab: building an environment where no checker exists. Four sections — tasks from
 * documents, tasks from traces, calibration of the open environment, and the audit of its
 * rollouts — each a card driven by studio-actions.ts.
 */
import { AuditPanel } from './AuditPanel.tsx';
import { CalibrationPanel } from './CalibrationPanel.tsx';
import { DocumentsPanel } from './DocumentsPanel.tsx';
import { TracesPanel } from './TracesPanel.tsx';
import { studioStore, useStudio, type StudioSection } from './studio-store.ts';
import './studio.css';

const SECTIONS: { value: StudioSection; label: string }[] = [
  { value: 'documents', label: 'Tasks from documents' },
  { value: 'traces', label: 'Tasks from traces' },
  { value: 'calibrate', label: 'Calibrate' },
  { value: 'audit', label: 'Audit' },
];

/** The Studio tab; `onOpenedEnvironment` shows the editor after a new environment file was opened. */
export function StudioView({ onOpenedEnvironment }: { onOpenedEnvironment: () => void }) {
  const section = useStudio((state) => state.section);
  const setSection = (value: StudioSection) => studioStore.setState({ section: value });
  return (
    <div className="studio-view" data-testid="studio-view">
      <div className="segmented studio-sections" role="tablist" aria-label="Studio sections">
        {SECTIONS.map((item) => (
          <button
            key={item.value}
            type="button"
            role="tab"
            aria-selected={section === item.value}
            className={section === item.value ? 'selected' : ''}
            data-testid={`studio-section-${item.value}`}
            onClick={() => setSection(item.value)}
          >
            {item.label}
          </button>
        ))}
      </div>
      {section === 'documents' && <DocumentsPanel onOpened={onOpenedEnvironment} />}
      {section === 'traces' && <TracesPanel onOpened={onOpenedEnvironment} />}
      {section === 'calibrate' && <CalibrationPanel onOpened={onOpenedEnvironment} />}
      {section === 'audit' && <AuditPanel onOpened={onOpenedEnvironment} />}
    </div>
  );
}
