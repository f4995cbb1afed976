/** A select for which model plays a studio role (generator, solver): offline heuristic, the policy, or the judge. */
import type { StudioRoleSource } from './studio-slice.ts';

/** The role picker. */
export function RoleSelect({ label, value, onChange, testId }: { label: string; value: StudioRoleSource; onChange: (value: StudioRoleSource) => void; testId: string }) {
  return (
    <label>
      {label}
      <select value={value} data-testid={testId} onChange={(event) => onChange(event.target.value as StudioRoleSource)}>
        <option value="heuristic">Offline heuristic</option>
        <option value="policy">The policy (Policy card)</option>
        <option value="judge">The judge (Judge card)</option>
      </select>
    </label>
  );
}
