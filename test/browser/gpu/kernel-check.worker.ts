/**
 * A module worker that runs one kernel check through the same device and kernel code as the page
 * (the engine lives in a worker in the app) and posts back `{ ok, message }`.
 */
import { requestGPUDevice } from '../../../src/gpu/webgpu/device.ts';
import { Kernels } from '../../../src/gpu/webgpu/kernels.ts';
import { KERNEL_CASES } from '../../support/gpu/kernel-cases.ts';

const scope = self as unknown as { postMessage: (message: unknown) => void };

async function run(): Promise<void> {
  const context = await requestGPUDevice({ label: 'worker kernel check' });
  const kernels = new Kernels(context);
  const matmul = KERNEL_CASES.find((kernelCase) => kernelCase.name.startsWith('matmul_backward'));
  if (!matmul) throw new Error('no matmul_backward case');
  context.device.pushErrorScope('validation');
  await matmul.run(kernels);
  const error = await context.device.popErrorScope();
  if (error) throw new Error(error.message);
  context.device.destroy();
  scope.postMessage({ ok: true, message: `${matmul.name} on ${context.adapter.vendor} ${context.adapter.architecture}` });
}

run().catch((error: unknown) => scope.postMessage({ ok: false, message: error instanceof Error ? error.message : String(error) }));
