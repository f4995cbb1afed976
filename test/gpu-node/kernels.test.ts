/**
 * Every WGSL kernel against its CPU reference in Node, on the adapter Dawn finds (SwiftShader on a
 * machine without a GPU). The cases are shared with the browser test; no adapter is a failure. The
 * last test checks that the cases compiled every kernel but those another file checks (the decoder's,
 * the sampler's, the f16-weight ones), so a new kernel cannot go untested.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { requestGPUDevice, type GPUContext } from '../../src/gpu/webgpu/device.ts';
import { WGSL, type KernelName } from '../../src/gpu/webgpu/kernels.generated.ts';
import { Kernels } from '../../src/gpu/webgpu/kernels.ts';
import { createNodeGPU } from '../../src/gpu/webgpu/node-gpu.ts';
import { KERNEL_CASES } from '../support/gpu/kernel-cases.ts';
import { MATMUL_VARIANT_CASES } from '../support/gpu/matmul-variant-cases.ts';

let context: GPUContext;
let kernels: Kernels;

beforeAll(async () => {
  context = await requestGPUDevice({ gpu: createNodeGPU(), label: 'gpu-node kernel tests' });
  kernels = new Kernels(context);
});

afterAll(() => context?.device.destroy());

// the forced-variant cases come last: the final one forces a variant on the shared Kernels
for (const kernelCase of [...KERNEL_CASES, ...MATMUL_VARIANT_CASES]) {
  test(kernelCase.name, async () => {
    context.device.pushErrorScope('validation');
    await kernelCase.run(kernels);
    const error = await context.device.popErrorScope();
    expect(error?.message, 'WebGPU validation error').toBeUndefined();
  });
}

/** Kernels other files check against their CPU references (the decoder's, the sampler's, the f16-weight ones), with the file that does. */
const TESTED_ELSEWHERE: Partial<Record<KernelName, string>> = {
  attention_decode_forward: 'test/support/gpu/decoder-cases.ts',
  kv_cache_write: 'test/support/gpu/decoder-cases.ts',
  rope_kv_cache_write: 'test/support/gpu/decoder-cases.ts',
  matmul_swiglu_forward: 'test/support/gpu/decoder-cases.ts',
  decode_steps: 'test/support/gpu/fused-decoder-cases.ts',
  sample_tokens: 'test/support/gpu/sampler-cases.ts',
  embedding_forward_f16w: 'test/gpu-node/f16-weights.test.ts',
  matmul_forward_f16w: 'test/gpu-node/f16-weights.test.ts',
  matmul_forward_narrow_f16w: 'test/gpu-node/f16-weights.test.ts',
  matmul_backward_dinp_f16w: 'test/gpu-node/f16-weights.test.ts',
};

test('every kernel is checked: the cases above compiled all but those another file names and checks', () => {
  const compiled = new Set(kernels.pipelineKeys().map((key) => key.split('|')[0]));
  const untested = (Object.keys(WGSL) as KernelName[]).filter((name) => !compiled.has(name) && !(name in TESTED_ELSEWHERE));
  expect(untested, 'kernels no case compiles: add a case to test/support/gpu/kernel-cases.ts').toEqual([]);
  for (const [name, file] of Object.entries(TESTED_ELSEWHERE)) expect(readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8'), `${file} checks ${name}`).toContain(name);
});
