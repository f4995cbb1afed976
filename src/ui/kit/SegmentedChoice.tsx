/**
 * A row of buttons of which exactly one is chosen: an ARIA radio group (a setting) or tab list (a
 * view). Arrow keys move the choice (and focus) to the next or previous option, Home and End to the
 * first and last, and only the chosen button is in the Tab order, as the WAI-ARIA radio group and
 * tabs (with automatic activation) patterns ask.
 */
import { useRef, type KeyboardEvent, type ReactNode } from 'react';
import { nextChoice, segmentedState } from './segmented-state.ts';

/** One option of a segmented choice. */
export interface SegmentedOption<T extends string> {
  value: T;
  label: ReactNode;
  /** Shown as the button's tooltip. */
  help?: string;
  /** Why the option cannot be chosen here (its tooltip): it is disabled, skipped by the arrow keys and never shown as chosen. */
  unavailable?: string;
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

/** A radio group (or tab list) of buttons. */
export function SegmentedChoice<T extends string>({ options, value, onChange, label, labelledBy, testIdPrefix, disabled = false, kind = 'radio', className = 'segmented' }: SegmentedChoiceProps<T>) {
  const buttons = useRef<(HTMLButtonElement | null)[]>([]);
  const state = segmentedState(options, value);
  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    const next = nextChoice(state, event.key);
    if (next === undefined) return;
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
          aria-checked={kind === 'radio' ? index === state.chosen : undefined}
          aria-selected={kind === 'tab' ? index === state.chosen : undefined}
          // Only the chosen option (the first available, when none is) is reached with Tab; arrows move within.
          tabIndex={index === state.tabStop ? 0 : -1}
          className={index === state.chosen ? 'selected' : ''}
          disabled={disabled || option.unavailable !== undefined}
          title={option.unavailable ?? option.help}
          data-testid={`${testIdPrefix}-${option.value}`}
          onClick={() => onChange(option.value)}
        >
          {option.label}
        </button>
      ))}
    </div>
  );
}
