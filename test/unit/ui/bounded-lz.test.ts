// Share links are lz-string text: the bounded decompressor decodes every link lz-string makes exactly
// as lz-string does, and stops a link that would decompress past its cap while decompressing.
import { compressToEncodedURIComponent, decompressFromEncodedURIComponent } from 'lz-string';
import { expect, test } from 'vitest';
import { decompressBounded, DecompressedTooLongError } from '../../../src/ui/features/share/bounded-lz.ts';

const ENV_SOURCE = `import { SingleTurnEnv, Rubric } from 'tabrl';
const exact = (ctx) => (ctx.completion.at(-1)?.content.trim() === ctx.answer ? 1 : 0);
export default function loadEnvironment(args = {}) {
  return new SingleTurnEnv({ name: 'reverse — “quotes” ✓ 🎲', dataset: [{ question: 'abc', answer: 'cba' }], rubric: new Rubric({ funcs: [exact] }) });
}
`;

test('decodes what lz-string encodes exactly as lz-string does', () => {
  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const samples = [
    'a',
    'ab',
    ENV_SOURCE,
    ENV_SOURCE.repeat(20),
    'x'.repeat(5000),
    Array.from({ length: 3000 }, () => String.fromCharCode(32 + Math.floor(random() * 95))).join(''),
    Array.from({ length: 2000 }, () => String.fromCharCode(Math.floor(random() * 0xd7ff))).join(''),
    JSON.stringify({ temperature: 0.7, maxTokens: 256, lossType: 'dr_grpo' }),
  ];
  for (const sample of samples) {
    const link = compressToEncodedURIComponent(sample);
    expect(decompressBounded(link, Infinity)).toBe(decompressFromEncodedURIComponent(link));
    expect(decompressBounded(link, Infinity)).toBe(sample);
  }
  // Damaged input: lz-string's answers, null or an empty string, and never a throw.
  for (const damaged of ['!!!!', 'A', compressToEncodedURIComponent(ENV_SOURCE).slice(0, 40)]) {
    expect(decompressBounded(damaged, Infinity)).toBe(decompressFromEncodedURIComponent(damaged));
  }
});

test('a short link that decompresses to millions of characters is stopped at the cap', () => {
  const bomb = compressToEncodedURIComponent('a'.repeat(1_000_000));
  expect(bomb.length).toBeLessThan(20_000);
  expect(() => decompressBounded(bomb, 200_000)).toThrow(DecompressedTooLongError);
  expect(() => decompressBounded(bomb, 200_000)).toThrow('the compressed text decompresses to more than 200000 characters');
  expect(decompressBounded(bomb, 1_000_000)).toHaveLength(1_000_000);
});
