/**
 * The device in Node + Dawn: an adapter is found (a missing one fails the test), the limits are the
 * adapter's own, the optional features are on where present, and errors and misuse are loud.
 */
import { expect, test } from 'vitest';
import { OPTIONAL_FEATURES, RAISED_LIMITS, requestGPUDevice } from '../../src/gpu/webgpu/device.ts';
import { createNodeGPU } from '../../src/gpu/webgpu/node-gpu.ts';

test('requestGPUDevice takes the adapter limits and features and reports validation errors clearly', async () => {
  const gpu = createNodeGPU();
  const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  expect(adapter, 'no WebGPU adapter in Node: is /usr/lib/chromium/vk_swiftshader_icd.json there?').not.toBeNull();
  const errors: Error[] = [];
  const context = await requestGPUDevice({ gpu, label: 'device test', onError: (error) => errors.push(error) });
  try {
    for (const name of RAISED_LIMITS) {
      const key = name as keyof GPUSupportedLimits;
      expect(context.device.limits[key], name).toBe(adapter!.limits[key]);
    }
    for (const feature of OPTIONAL_FEATURES) expect(context.device.features.has(feature), feature).toBe(adapter!.features.has(feature));
    expect(context.features.shaderF16).toBe(adapter!.features.has('shader-f16'));
    expect(context.adapter.vendor).toBeTypeOf('string');

    context.device.createBuffer({ size: 4, usage: 0xffff }); // invalid usage bits
    await context.device.queue.onSubmittedWorkDone();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(errors.length).toBeGreaterThan(0);
    expect(errors[0]!.message).toMatch(/WebGPU validation error on device "device test"/);
    expect(context.firstError()).toBe(errors[0]);
  } finally {
    context.device.destroy();
  }
  expect((await context.lost).reason).toBe('destroyed');
});

test('requestGPUDevice without a GPU object fails loudly instead of running nothing', async () => {
  const navigatorHolder = globalThis as { navigator?: unknown };
  const saved = navigatorHolder.navigator;
  Object.defineProperty(globalThis, 'navigator', { value: {}, configurable: true });
  try {
    await expect(requestGPUDevice()).rejects.toThrow(/WebGPU is not available here/);
  } finally {
    Object.defineProperty(globalThis, 'navigator', { value: saved, configurable: true });
  }
});
