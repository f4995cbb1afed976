/** The Chat tab's note on its base column names what the base really is for each kind of in-tab model. */
import { describe, expect, test } from 'vitest';
import { chatBaseNote } from '../../../src/ui/features/chat/chat-text.ts';

describe('chatBaseNote', () => {
  test('a real model trained with LoRA: its own weights with the adapters off, never "the tiny model … fully fine-tuned"', () => {
    const note = chatBaseNote({ model: 'local', modelName: 'Llama-3.2-1B-Instruct', loraRank: 8, parameters: 1_235_814_400 }, 0);
    expect(note).toBe('Base: Llama-3.2-1B-Instruct as downloaded, the same weights with the LoRA adapters (rank 8) switched off.');
    expect(note).not.toMatch(/tiny|fully fine-tuned/);
  });

  test('tiny and nano train fully: tiny from its seed, nano from its pretrained weights', () => {
    expect(chatBaseNote({ model: 'tiny', modelName: 'tiny (from scratch)', loraRank: null, parameters: 101_000 }, 3)).toContain('the tiny model as initialised from seed 3');
    const nano = chatBaseNote({ model: 'nano', modelName: 'nano (pretrained, 0.32M)', loraRank: null, parameters: 321_536 }, 0);
    expect(nano).toBe('Base: nano (pretrained, 0.32M) as it was where the run started (it is fully fine-tuned, so it has no adapters to switch off; the engine keeps a copy of its 321,536 initial weights).');
  });
});
