/**
 * Writes docs/examples/harbour-codes/: a small made-up document set for task synthesis during
 * training with a local policy (bench/synth-training.ts; BENCHMARKS.md, "Task synthesis during
 * training against a fixed pool"). A harbour keeps each of its things in a shed named by a
 * two-letter code, painted on the shed's door ("The spare rope is kept in shed Al beside the
 * slipway, and its door is marked Al."). The heuristic generator (`--generator-model heuristic`)
 * hides the first mention of the code, so every synthesized question is a "which shed?" whose
 * two-letter answer the question still holds once: closed book, but readable from the question, a
 * skill that carries to new questions, which is what a short run can learn. The codes are among the
 * ones the shipped nano starts its replies with (its first letter is "a" in about 98 % of replies,
 * then u, r, l, t, p, y, s, b, … at falling rates; measured with `tabrl eval … --model local:nano
 * --max-tokens 6`), so the untrained policy passes some questions by chance and GRPO has a signal.
 * Not "Au", which untrained nano says a third of the time: its questions were learned first and
 * pushed every other code out (the first bench run). No "An": the grader drops articles. `start.md` is the pool a run begins with (two sections of
 * three sentences); `more/` holds the documents the refreshes read, one per refresh (six; the last
 * has four sentences). Made from a fixed seed, so every run writes the same files.
 * Run: node scripts/make-harbour-docs.mjs
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { seededRandom } from './seeded-random.mjs';

const next = seededRandom(29);
const shuffled = (list) => {
  const copy = [...list];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [copy[i], copy[j]] = [copy[j], copy[i]];
  }
  return copy;
};

const CODES = ['At', 'Al', 'Am', 'As', 'Ay', 'Ap', 'Ab'];
const THINGS = [
  'spare rope',
  'blue lantern',
  'tide chart',
  'brass bell',
  'fishing net',
  'tar bucket',
  'oar rack',
  'sail needle',
  'cork float',
  'storm lamp',
  'anchor chain',
  'paint tin',
  'canvas tarp',
  'coil of wire',
  'signal flag',
  'hand pump',
  'lobster pot',
  'boat hook',
  'life ring',
  'rain cape',
  'tool chest',
  'spare mast',
  'rudder pin',
  'fog horn',
  'water cask',
  'salt barrel',
  'rope ladder',
  'deck brush',
  'iron kettle',
  'spare lens',
  'net needle',
  'tiller arm',
  'chart table',
  'copper pot',
  'spare keel',
  'bilge pail',
  'winch handle',
  'mooring line',
  'gaff hook',
  'rowing seat',
];
const TAILS = ['beside the slipway', 'near the pier', 'behind the fish market', 'at the end of the quay', 'under the old crane', 'next to the ferry ramp', 'by the harbour wall', 'past the net lofts'];
const VERBS = ['is kept in shed', 'is stored in shed', 'hangs in shed', 'waits in shed'];

/** One section: a heading and three sentences, each naming a shed by its code twice (the generator hides the first). */
function section(title, things) {
  const sentences = things.map((thing) => {
    const code = CODES[Math.floor(next() * CODES.length)];
    return `The ${thing} ${VERBS[Math.floor(next() * VERBS.length)]} ${code} ${TAILS[Math.floor(next() * TAILS.length)]}, and its door is marked ${code}.`;
  });
  return `## ${title}\n\n${sentences.join(' ')}\n`;
}

const things = shuffled(THINGS);
const root = join(import.meta.dirname, '..', 'docs', 'examples', 'harbour-codes');
rmSync(root, { recursive: true, force: true });
mkdirSync(join(root, 'more'), { recursive: true });
// The starting pool: two sections, six things.
writeFileSync(join(root, 'start.md'), `# Harbour sheds\n\n${section('North sheds', things.slice(0, 3))}\n${section('South sheds', things.slice(3, 6))}`);
// The refreshes' documents: two sections each over the other 34 things (the sixth has four).
for (let doc = 0, at = 6; at < things.length; doc++) {
  const first = things.slice(at, at + 3);
  const second = things.slice(at + 3, at + 6);
  at += 6;
  const parts = [section(`Row ${doc + 1}, east`, first), ...(second.length > 0 ? [section(`Row ${doc + 1}, west`, second)] : [])];
  writeFileSync(join(root, 'more', `row-${String(doc + 1).padStart(2, '0')}.md`), `# Harbour sheds, row ${doc + 1}\n\n${parts.join('\n')}`);
}
