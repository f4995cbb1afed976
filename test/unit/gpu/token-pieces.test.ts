/** tokenPieces: one string per sampled token, joined they give the completion's text, for the byte tokenizer and a byte-level BPE vocabulary of multi-byte tokens. */
import { describe, expect, test } from 'vitest';
import { ByteTokenizer } from '../../../src/gpu/io/byte-tokenizer.ts';
import { HfTokenizer } from '../../../src/gpu/io/hf-tokenizer.ts';
import { tokenPieces } from '../../../src/gpu/io/token-pieces.ts';
import { byteLevelTokenizerJson, wideTokenTexts } from '../../support/tiny-hf-model.ts';

const wide = new HfTokenizer({ tokenizerJson: byteLevelTokenizerJson(wideTokenTexts()), tokenizerConfig: { eos_token: '<|im_end|>', pad_token: '<|endoftext|>' } });

describe('tokenPieces', () => {
  test('byte tokenizer: a multi-byte character split over bytes shows once, on the byte that completes it', () => {
    const tokenizer = new ByteTokenizer();
    const ids = tokenizer.encode('aé日b');
    expect(ids.length).toBe(7); // 1 + 2 + 3 + 1 bytes
    expect(tokenPieces(tokenizer, ids)).toEqual(['a', '', 'é', '', '', '日', 'b']);
  });

  test('byte tokenizer: bytes left incomplete at the end still show (as the decoder writes them), special tokens by name', () => {
    const tokenizer = new ByteTokenizer();
    const ids = [...tokenizer.encode('ok'), 0xe6, 0x97];
    const pieces = tokenPieces(tokenizer, ids);
    expect(pieces.slice(0, 2)).toEqual(['o', 'k']);
    expect(pieces.join('')).toBe(tokenizer.decode(ids));
    expect(tokenPieces(tokenizer, [...tokenizer.encode('hi'), tokenizer.eosIds[0]!]).at(-1)).toBe(tokenizer.decode([tokenizer.eosIds[0]!]));
  });

  test('byte-level BPE with ids past 264: multi-byte tokens decode whole, and the pieces join to decode(ids)', () => {
    const texts = wideTokenTexts();
    expect(wide.vocabSize).toBe(512);
    const id = (text: string) => 261 + texts.indexOf(text);
    const ids = [id('日'), id(' é'), 72, 105, id('🎉'), 260];
    expect([ids[0], ids[1], ids[4]].every((value) => value! > 264)).toBe(true);
    const pieces = tokenPieces(wide, ids);
    expect(pieces).toEqual(['日', ' é', 'H', 'i', '🎉', '<|im_end|>']);
    expect(pieces.join('')).toBe(wide.decode(ids));
  });

  test('random ids of a wide vocabulary (lone bytes of characters among them) always join to decode(ids)', () => {
    let seed = 12345;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    for (let trial = 0; trial < 200; trial++) {
      const ids = Array.from({ length: 1 + Math.floor(random() * 40) }, () => Math.floor(random() * wide.vocabSize));
      const pieces = tokenPieces(wide, ids);
      expect(pieces.length).toBe(ids.length);
      expect(pieces.join('')).toBe(wide.decode(ids));
    }
  });
});
