/**
 * Whether a byte-level model copies: fresh identifiers (2-3 capitals, a dash, 3-5 digits, seeded)
 * asked back in the echo chat of tool-copy-corpus.ts (`Repeat: QK-40721`). Two numbers: the share
 * said back exactly (greedy) and the share of the answer's characters the model ranks first under
 * teacher forcing. A model that does not copy gets about 1/26 of the letters and 1/10 of the digits.
 * scripts/nano/copy-probe.ts prints them for model folders; the shipped-folder test holds nano-tools to them.
 */
import { createRng, type Rng } from '../../src/envs/builtin/random.ts';
import { ByteTokenizer } from '../../src/gpu/io/byte-tokenizer.ts';
import type { ModelBackend } from '../../src/gpu/model/backend.ts';

/** How well a model said fresh identifiers back: shares in [0, 1]. */
export interface CopyingMeasure {
  exact: number;
  characters: number;
}

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

/** Asks `probes` identifiers (drawn from `seed`) back of a byte-tokenizer model of vocabulary `vocabSize` on `backend`. */
export async function measureCopying(backend: ModelBackend, vocabSize: number, probes: number = 40, seed: number = 1_000_003): Promise<CopyingMeasure> {
  const tokenizer = new ByteTokenizer();
  const endId = tokenizer.encode('<|end|>')[0]!;
  const V = vocabSize;
  const rng = createRng(seed);
  let exact = 0;
  let right = 0;
  let total = 0;
  for (let probe = 0; probe < probes; probe++) {
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
  return { exact: exact / probes, characters: right / total };
}
