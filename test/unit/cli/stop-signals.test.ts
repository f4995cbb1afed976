// A second Ctrl-C ends the command at once, after its last words, whatever it is waiting for.
import { afterEach, expect, test, vi } from 'vitest';
import { onStopSignal, type StopSignal } from '../../../src/cli/stop-signals.ts';

let stop: StopSignal | undefined;
afterEach(() => stop?.dispose());

test('the first Ctrl-C aborts the signal; the second calls the last words and exits 130', () => {
  const exits: number[] = [];
  const lastWords = vi.fn();
  const error = vi.spyOn(console, 'error').mockImplementation(() => {});
  stop = onStopSignal({ beforeForcedExit: lastWords, exit: (code) => exits.push(code) });
  process.emit('SIGINT', 'SIGINT');
  expect(stop.signal.aborted).toBe(true);
  expect(stop.exitCode).toBe(130);
  expect(exits).toEqual([]);
  process.emit('SIGINT', 'SIGINT');
  expect(lastWords).toHaveBeenCalledOnce();
  expect(exits).toEqual([130]);
  expect(error).toHaveBeenCalledWith('\nCtrl-C again: stopping now');
  error.mockRestore();
});

test('the process still exits when the last words throw (a full disk)', () => {
  const exits: number[] = [];
  vi.spyOn(console, 'error').mockImplementation(() => {});
  stop = onStopSignal({ beforeForcedExit: () => { throw new Error('ENOSPC'); }, exit: (code) => exits.push(code) });
  process.emit('SIGTERM', 'SIGTERM');
  expect(() => process.emit('SIGTERM', 'SIGTERM')).toThrow('ENOSPC');
  expect(exits).toEqual([143]);
  vi.restoreAllMocks();
});
