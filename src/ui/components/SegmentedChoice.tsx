/**
 * A row of buttons of which exactly one is chosen: an ARIA radio group (a setting) or tab list (a
 * view). Arrow keys move the choice (and focus) to the next or previous option, Home and End to the
 * first and last, and only the chosen button is in the Tab order, as the WAI-ARIA radio group and
 * tabs (with automatic activation) patterns ask.
 */
import { useRef, type KeyboardEvent, type ReactNode } from 'react';

/** One option of a segmented choice. */
export interface SegmentedOption<T extends string> {
  value: T;
  label: ReactNode;
  /** Shown as the button's tooltip. */
  help?: string;
}

/** What a segmented choice shows and where a new choice goes. */
export interface SegmentedChoiceProps<T extends string> {
  options: readonly SegmentedOption<T>[];
  value: T;
  onChange: (value: T) => void;
  /** The group's accessible name (or name it with `labelledBy`). */
  label?: string;
  /** The id of the element that names the group. */
  labelledBy?: string;
  /** Each button's test id is `${testIdPrefix}-${value}`. */
  testIdPrefix: string;
  disabled?: boolean;
  /** `radio` (default): a setting; `tab`: the buttons switch views. */
  kind?: 'radio' | 'tab';
  /** The group's class names (default `segmented`, the app's pill row). */
  className?: string;
}

/** Keys that move the choice, and by how much (Home and End jump to the ends). */
const STEPS: Readonly<Record<string, number>> = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 };

/** A radio group (or tab list) of buttons. */
export function SegmentedChoice<T extends string>({ options, value, onChange, label, labelledBy, testIdPrefix, disabled = false, kind = 'radio', className = 'segmented' }: SegmentedChoiceProps<T>) {
  const buttons = useRef<(HTMLButtonElement | null)[]>([]);
  const chosen = options.findIndex((option) => option.value === value);
  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    if (options.length === 0) return;
    const current = Math.max(chosen, 0);
    let next: number;
    if (event.key === 'Home') next = 0;
    else if (event.key === 'End') next = options.length - 1;
    else if (event.key in STEPS) next = (current + STEPS[event.key]! + options.length) % options.length;
    else return;
    event.preventDefault();
    buttons.current[next]?.focus();
    onChange(options[next]!.value);
  };
  return (
    <div className={className} role={kind === 'tab' ? 'tablist' : 'radiogroup'} aria-label={label} aria-labelledby={labelledBy} onKeyDown={disabled ? undefined : onKeyDown}>
      {options.map((option, index) => (
        <button
          key={option.value}
          ref={(element) => {
            buttons.current[index] = element;
          }}
          type="button"
          role={kind}
          aria-checked={kind === 'radio' ? option.value === value : undefined}
          aria-selected={kind === 'tab' ? option.value === value : undefined}
          // Only the chosen option (the first, when none is) is reached with Tab; arrows move within.
          tabIndex={index === Math.max(chosen, 0) ? 0 : -1}
          className={option.value === value ? 'selected' : ''}
          disabled={disabled}
          title={option.help}
          data-testid={`${testIdPrefix}-${option.value}`}
          onClick={() => onChange(option.value)}
        >
          {option.label}
        </button>
      ))}
    </div>
  );
}
