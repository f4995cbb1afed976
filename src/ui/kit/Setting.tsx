/** One row of a settings card: a label, its control and a line of help; and the number input most rows use. */
import type { ReactNode } from 'react';

/** A labelled setting: its name above the control and a line of help under it. */
export function Setting({ label, help, children }: { label: string; help: string; children: ReactNode }) {
  return (
    <label className="setting">
      <span className="setting-label">{label}</span>
      {children}
      <span className="setting-help">{help}</span>
    </label>
  );
}

/** A numeric setting as a row of a settings table: the key it sets, its label, a line of help and the range it allows. */
export interface NumberField<K extends string> {
  key: K;
  label: string;
  help: string;
  min: number;
  max: number;
  /** The input's step (default 1). */
  step?: number;
}

/** A number input for one field: a typed number is clamped to the field's range; an empty or non-numeric entry changes nothing. */
export function NumberSetting<K extends string>({ field, value, testId, onChange }: { field: NumberField<K>; value: number; testId: string; onChange: (value: number) => void }) {
  return (
    <Setting label={field.label} help={field.help}>
      <input
        type="number"
        data-testid={testId}
        value={value}
        min={field.min}
        max={field.max}
        step={field.step ?? 1}
        onChange={(event) => {
          const number = Number(event.target.value);
          if (event.target.value !== '' && Number.isFinite(number)) onChange(Math.min(field.max, Math.max(field.min, number)));
        }}
      />
    </Setting>
  );
}
