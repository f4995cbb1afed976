/** The actions' unrendered state: a module keeps one object, and a reset gives it fresh values in place. */
import { describe, expect, test } from 'vitest';
import { actionState, resetActionState } from '../../../src/ui/store/action-state.ts';

describe('action state', () => {
  test('a reset gives every part its fresh values again, in the same object the module holds', () => {
    const counter = actionState(() => ({ count: 0, seen: [] as string[], controller: undefined as AbortController | undefined }));
    const other = actionState(() => ({ loaded: null as string | null }));
    const held = counter;
    counter.count = 3;
    counter.seen.push('a');
    counter.controller = new AbortController();
    other.loaded = 'model';
    resetActionState();
    expect(held).toBe(counter);
    expect(counter).toEqual({ count: 0, seen: [], controller: undefined });
    expect(other.loaded).toBeNull();
    // A fresh list, not the old one emptied: whoever kept the old one keeps what it had.
    counter.seen.push('b');
    expect(counter.seen).toEqual(['b']);
  });
});
