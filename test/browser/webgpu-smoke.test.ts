// The browser project is live: real Chromium hands out a WebGPU adapter and runs a compute shader.
import { expect, test } from 'vitest';

const DOUBLE_SHADER = /* wgsl */ `
@group(0) @binding(0) var<storage, read_write> data: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  if (id.x < arrayLength(&data)) { data[id.x] = data[id.x] * 2.0 + 1.0; }
}`;

test('a WebGPU adapter runs a compute shader in the page', async () => {
  expect(navigator.gpu, 'navigator.gpu is missing: Chromium needs --enable-unsafe-webgpu').toBeDefined();
  const adapter = await navigator.gpu.requestAdapter();
  expect(adapter, 'requestAdapter() returned null: no WebGPU adapter in this browser').not.toBeNull();
  const device = await adapter!.requestDevice();

  const input = Float32Array.from({ length: 100 }, (_, i) => i - 50);
  const storage = device.createBuffer({
    size: input.byteLength,
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
  });
  device.queue.writeBuffer(storage, 0, input);
  const readback = device.createBuffer({ size: input.byteLength, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const pipeline = device.createComputePipeline({
    layout: 'auto',
    compute: { module: device.createShaderModule({ code: DOUBLE_SHADER }), entryPoint: 'main' },
  });
  const bindGroup = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: storage } }] });

  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, bindGroup);
  pass.dispatchWorkgroups(Math.ceil(input.length / 64));
  pass.end();
  encoder.copyBufferToBuffer(storage, 0, readback, 0, input.byteLength);
  device.queue.submit([encoder.finish()]);
  await readback.mapAsync(GPUMapMode.READ);
  const output = new Float32Array(readback.getMappedRange().slice(0));
  readback.unmap();

  expect(Array.from(output)).toEqual(Array.from(input, (x) => x * 2 + 1));
  device.destroy();
});
