/**
 * `npx tsx scripts/nano/copy-probe.ts DIR [DIR ...]`: can a byte-level model folder copy? For each
 * folder, 40 fresh identifiers are asked back in the echo chat (copying.ts), on TabRL's CPU backend:
 * the share said back exactly (greedy) and the share of the answer's characters the model ranks
 * first under teacher forcing. Prints a table and one JSON line.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadModelFolder } from '../../src/gpu/io/model-folder.ts';
import { createFastCpuBackend } from '../../src/gpu/fast-cpu/fast-cpu-backend.ts';
import { createNodeWasmKernels } from '../../src/gpu/fast-cpu/node-kernel-threads.ts';
import { measureCopying } from './copying.ts';

const PROBES = 40;
const rows: { folder: string; exact: number; characters: number }[] = [];
const kernels = await createNodeWasmKernels();
for (const folder of process.argv.slice(2)) {
  const model = await loadModelFolder((name) => readFile(join(folder, name)), folder);
  const backend = await createFastCpuBackend(model.config, { tensors: model.tensors }, {}, kernels);
  const { exact, characters } = await measureCopying(backend, model.config.vocab_size, PROBES);
  backend.dispose();
  rows.push({ folder, exact, characters: Number(characters.toFixed(3)) });
}
console.log(`| model folder | said back exactly (${PROBES}) | answer characters ranked first |`);
console.log('|---|---|---|');
for (const row of rows) console.log(`| ${row.folder} | ${row.exact.toFixed(3)} | ${row.characters.toFixed(3)} |`);
console.log(JSON.stringify({ bench: 'copy-probe', probes: PROBES, rows }));
process.exit(0);
