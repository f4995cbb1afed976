/**
 * The fast CPU backend (WASM SIMD matmuls) against the same PyTorch golden fixtures as the reference
 * backend: logits, log-probs, loss, every gradient and 10 AdamW steps, single-threaded and on two
 * worker threads.
 */
import { readFileSync } from 'node:fs';
import { afterAll, describe, it } from 'vitest';
import { createFastCpuBackend } from '../../../../src/gpu/fast-cpu/fast-cpu-backend.ts';
import { createNodeWasmKernels } from '../../../../src/gpu/fast-cpu/node-kernel-threads.ts';
import type { WasmKernels } from '../../../../src/gpu/fast-cpu/wasm-kernels.ts';
import { checkBackendAgainstGolden, GOLDEN_VARIANTS, parseGoldenFixture } from '../golden-fixture.ts';

const FIXTURE_DIR = new URL('../../../fixtures/golden/', import.meta.url);
const kernelSets: WasmKernels[] = [];
afterAll(() => kernelSets.forEach((kernels) => kernels.dispose()));

describe('fast cpu backend matches the PyTorch golden fixture', () => {
  for (const threads of [1, 2]) {
    for (const variant of GOLDEN_VARIANTS) {
      it(`${variant} on ${threads} thread(s): logits, logprobs, loss, gradients and 10 AdamW steps`, async () => {
        const fixture = parseGoldenFixture(
          readFileSync(new URL(`${variant}.json`, FIXTURE_DIR), 'utf8'),
          new Uint8Array(readFileSync(new URL(`${variant}.safetensors`, FIXTURE_DIR))),
        );
        const kernels = await createNodeWasmKernels(threads);
        kernelSets.push(kernels);
        await checkBackendAgainstGolden(fixture, (config, tensors) => createFastCpuBackend(config, { tensors }, {}, kernels));
      });
    }
  }
});
