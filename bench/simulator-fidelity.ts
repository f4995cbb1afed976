/**
 * `npx tsx bench/simulator-fidelity.ts`: fidelity per round of a tool simulator on the held-out part
 * of the shipped trace log of a fictional API (docs/examples/parcel-desk-traces.jsonl), as
 * `tabrl simulate --rounds R` measures it (src/envs/studio/fidelity.ts). The simulator is the offline
 * scripted one (ScriptedSimulatorClient: the nearest recorded call its prompt shows), so the numbers
 * say how far retrieval alone goes on this log, not what a model does; no judge, so no judged
 * column. Runs each seed of --seeds (held-out splits) for --rounds rounds. Prints a table and one
 * JSON line.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { refineSimulator, ScriptedSimulatorClient, splitHeldOut, tasksFromTraces, type FidelityRow } from '../src/envs/studio/index.ts';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, seeds: { type: 'string', default: '0,1,2' }, 'held-out': { type: 'string', default: '0.25' } } });
const rounds = Number(values.rounds);
const seeds = values.seeds.split(',').map(Number);
const heldOutShare = Number(values['held-out']);

const traces = tasksFromTraces(readFileSync(new URL('../docs/examples/parcel-desk-traces.jsonl', import.meta.url), 'utf8'));
const rows: { seed: number; round: number; corrections: number; tool: string; calls: number; exact: number; fields: number }[] = [];
const started = performance.now();
for (const seed of seeds) {
  const split = splitHeldOut(traces.records, heldOutShare, seed);
  const result = await refineSimulator(split, { tools: traces.tools, client: new ScriptedSimulatorClient(), model: 'scripted', seed, rounds });
  for (const round of result.rounds) {
    for (const row of [...round.rows, round.overall] as FidelityRow[]) rows.push({ seed, round: round.round, corrections: round.corrections, tool: row.tool === '*' ? 'all tools' : row.tool, calls: row.calls, exact: row.exact, fields: row.fields });
  }
}
const seconds = (performance.now() - started) / 1000;

const percent = (share: number) => `${(share * 100).toFixed(1)}%`;
console.log(`simulator fidelity · scripted nearest-record simulator · ${traces.records.length} recorded calls · held-out share ${heldOutShare} · ${seconds.toFixed(2)} s`);
console.log('| seed | round | corrections | tool | held-out calls | exact | fields |');
console.log('|---|---|---|---|---|---|---|');
for (const row of rows) console.log(`| ${row.seed} | ${row.round} | ${row.corrections} | ${row.tool} | ${row.calls} | ${percent(row.exact)} | ${percent(row.fields)} |`);
console.log(JSON.stringify({ bench: 'simulator-fidelity', simulator: 'scripted', records: traces.records.length, heldOutShare, rounds, seeds, seconds, rows }));
