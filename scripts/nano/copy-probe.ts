/**
 * `npx tsx scripts/nano/copy-probe.ts DIR [DIR ...]`: can a byte-level model folder copy? For each
 * folder, 40 fresh identifiers (2-3 capitals, a dash, 3-5 digits, seeded) are asked back in the
 * echo chat of tool-copy-corpus.ts (`Repeat: QK-40721`), and two numbers come out: the share said
 * back exactly (greedy, on TabRL's CPU backend) and the share of the answer's characters the model
 * ranks first under teacher forcing. A model that does not copy gets about 1/26 of the letters and
 * 1/10 of the digits (the dash and the end are free). Prints a table and one JSON line.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createRng, type Rng } from '../../src/envs/builtin/random.ts';
import { ByteTokenizer } from '../../src/gpu/io/byte-tokenizer.ts';
import { loadModelFolder } from '../../src/gpu/io/model-folder.ts';
import { createFastCpuBackend } from '../../src/gpu/fast-cpu/fast-cpu-backend.ts';
import { createNodeWasmKernels } from '../../src/gpu/fast-cpu/node-kernel-threads.ts';

const PROBES = 40;
const tokenizer = new ByteTokenizer();
const endId = tokenizer.encode('<|end|>')[0]!;

/** An identifier like the corpus's: `QK-40721`. */
function identifier(rng: Rng): string {
  const letters = Array.from({ length: rng.int(2, 3) }, () => String.fromCharCode(65 + rng.int(0, 25))).join('');
  return `${letters}-${Array.from({ length: rng.int(3, 5) }, () => String(rng.int(0, 9))).join('')}`;
}

/** The index of the largest of `length` logits starting at `offset`. */
function argmax(logits: Float32Array, offset: number, length: number): number {
  let best = 0;
  for (let i = 1; i < length; i++) if (logits[offset + i]! > logits[offset + best]!) best = i;
  return best;
}

const rows: { folder: string; exact: number; characters: number }[] = [];
const kernels = await createNodeWasmKernels();
for (const folder of process.argv.slice(2)) {
  const model = await loadModelFolder((name) => readFile(join(folder, name)), folder);
  const backend = await createFastCpuBackend(model.config, { tensors: model.tensors }, {}, kernels);
  const V = model.config.vocab_size;
  const rng = createRng(1_000_003);
  let exact = 0;
  let right = 0;
  let total = 0;
  for (let probe = 0; probe < PROBES; probe++) {
    const value = identifier(rng);
    const prompt = tokenizer.encode(tokenizer.renderChat([{ role: 'user', content: `Repeat: ${value}` }], { addGenerationPrompt: true }));
    const answer = tokenizer.encode(value);
    // Teacher forcing: the prompt and the answer in one pass; position t predicts token t + 1.
    const ids = Int32Array.from([...prompt, ...answer]);
    const logits = await backend.forward(ids, 1, ids.length);
    for (let i = 0; i < answer.length; i++) right += argmax(logits, (prompt.length - 1 + i) * V, V) === answer[i] ? 1 : 0;
    total += answer.length;
    // Greedy: at most the answer's length and one more token.
    const said: number[] = [];
    for (let step = 0; step <= answer.length; step++) {
      const context = Int32Array.from([...prompt, ...said]);
      const next = argmax(await backend.forward(context, 1, context.length), (context.length - 1) * V, V);
      if (next === endId) break;
      said.push(next);
    }
    exact += tokenizer.decode(said) === value ? 1 : 0;
  }
  backend.dispose();
  rows.push({ folder, exact: exact / PROBES, characters: Number((right / total).toFixed(3)) });
}
console.log(`| model folder | said back exactly (${PROBES}) | answer characters ranked first |`);
console.log('|---|---|---|');
for (const row of rows) console.log(`| ${row.folder} | ${row.exact.toFixed(3)} | ${row.characters.toFixed(3)} |`);
console.log(JSON.stringify({ bench: 'copy-probe', probes: PROBES, rows }));
process.exit(0);
