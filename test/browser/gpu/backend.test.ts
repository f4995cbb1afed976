/**
 * The WebGPU backend in real Chromium: against the CPU backend on tiny random models, the overfit
 * check, and against the PyTorch golden fixtures (served by Vite, fetched by URL). No adapter is a
 * failure, not a skip.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { requestGPUDevice, type GPUContext } from '../../../src/gpu/webgpu/device.ts';
import { createWebGPUBackend } from '../../../src/gpu/webgpu/webgpu-backend.ts';
import { checkBackendAgainstGolden, GOLDEN_VARIANTS, parseGoldenFixture } from '../../unit/gpu/golden-fixture.ts';
import { BACKEND_CASES } from '../../support/gpu/backend-cases.ts';

/** URLs of the committed fixture files, as Vite serves them. */
const FIXTURE_URLS = import.meta.glob('../../fixtures/golden/*.{json,safetensors}', { query: '?url', import: 'default', eager: true }) as Record<string, string>;

let context: GPUContext;

beforeAll(async () => {
  context = await requestGPUDevice({ label: 'browser backend tests' });
});

afterAll(() => context?.device.destroy());

async function withValidation(body: () => Promise<void>): Promise<void> {
  context.device.pushErrorScope('validation');
  await body();
  const error = await context.device.popErrorScope();
  expect(error?.message, 'WebGPU validation error').toBeUndefined();
}

for (const backendCase of BACKEND_CASES) {
  test(backendCase.name, () => withValidation(() => backendCase.run(context)));
}

for (const variant of GOLDEN_VARIANTS) {
  test(`webgpu backend matches the PyTorch golden fixture: ${variant}`, () =>
    withValidation(async () => {
      const url = (extension: string): string => {
        const found = FIXTURE_URLS[`../../fixtures/golden/${variant}.${extension}`];
        if (!found) throw new Error(`no golden fixture ${variant}.${extension} under test/fixtures/golden`);
        return found;
      };
      const json = await (await fetch(url('json'))).text();
      const bytes = new Uint8Array(await (await fetch(url('safetensors'))).arrayBuffer());
      await checkBackendAgainstGolden(parseGoldenFixture(json, bytes), (config, tensors) => createWebGPUBackend(context, config, { tensors }));
    }));
}
