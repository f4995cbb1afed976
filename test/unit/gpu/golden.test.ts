/**
 * The CPU backend against the PyTorch golden fixtures (logits, log-probs, loss, every gradient,
 * 10 AdamW steps). Reads only the committed files; torch is needed only to regenerate them.
 */
import { readFileSync } from 'node:fs';
import { describe, it } from 'vitest';
import { createCpuBackend } from '../../../src/gpu/model/cpu-backend.ts';
import { checkBackendAgainstGolden, GOLDEN_VARIANTS, parseGoldenFixture } from './golden-fixture.ts';

const FIXTURE_DIR = new URL('../../fixtures/golden/', import.meta.url);

describe('cpu backend matches the PyTorch golden fixture', () => {
  for (const variant of GOLDEN_VARIANTS) {
    it(`${variant}: logits, logprobs, loss, gradients and 10 AdamW steps`, async () => {
      const fixture = parseGoldenFixture(
        readFileSync(new URL(`${variant}.json`, FIXTURE_DIR), 'utf8'),
        new Uint8Array(readFileSync(new URL(`${variant}.safetensors`, FIXTURE_DIR))),
      );
      await checkBackendAgainstGolden(fixture, (config, tensors) => createCpuBackend(config, { tensors }));
    });
  }
});
