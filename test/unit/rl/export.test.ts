import { expect, test } from 'vitest';
import { loadModelFolder } from '../../../src/gpu/io/model-folder.ts';
import { parseSafetensors } from '../../../src/gpu/io/safetensors.ts';
import { createCpuBackend } from '../../../src/gpu/model/cpu-backend.ts';
import { LORA_TARGET_MODULES, type LoraConfig } from '../../../src/gpu/model/layout.ts';
import { exportMergedModel, exportPeftAdapter } from '../../../src/rl/export.ts';
import { expectClose } from '../../support/expect-close.ts';
import { LETTER_MODEL } from '../../support/letter-task.ts';

const LORA: LoraConfig = { rank: 4, alpha: 8, targetModules: [...LORA_TARGET_MODULES] };
const IDS = Int32Array.from([1, 5, 9, 2, 7, 3]);

/** A LoRA model whose adapters are non-zero (B starts at zero, so train a few steps). */
async function trainedLoraModel() {
  const backend = await createCpuBackend(LETTER_MODEL, { seed: 7 }, { lora: LORA, loraSeed: 3 });
  const targets = Int32Array.from([5, 9, 2, 7, 3, 1]);
  for (let step = 0; step < 3; step++) {
    await backend.zeroGrad();
    await backend.backward(IDS, targets, new Float32Array(6).fill(-1 / 6), 1, 6, 1);
    await backend.step({ lr: 5e-2, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0, maxGradNorm: 0 });
  }
  return backend;
}

test('an exported PEFT adapter loads back onto the base model and gives the same logits', async () => {
  const trained = await trainedLoraModel();
  const parameters = await trained.getParameters();
  const files = exportPeftAdapter(parameters, LETTER_MODEL, LORA, 'tiny');
  const config = JSON.parse(new TextDecoder().decode(files.get('adapter_config.json')));
  expect(config).toMatchObject({ peft_type: 'LORA', r: 4, lora_alpha: 8, target_modules: [...LORA_TARGET_MODULES] });
  const adapter = parseSafetensors(files.get('adapter_model.safetensors')!).tensors;
  expect([...adapter.keys()].every((name) => name.startsWith('base_model.model.model.layers.'))).toBe(true);

  const base = new Map([...parameters].filter(([name]) => !name.startsWith('base_model.')));
  const reloaded = await createCpuBackend(LETTER_MODEL, { tensors: base }, { lora: LORA });
  await reloaded.setParameters(adapter);
  expectClose(await reloaded.forward(IDS, 1, 6), await trained.forward(IDS, 1, 6), { atol: 0, rtol: 0, label: 'logits after reloading the adapter' });
});

test('the merged model folder loads without LoRA and gives the same logits', async () => {
  const trained = await trainedLoraModel();
  const files = exportMergedModel(await trained.getParameters(), LETTER_MODEL, LORA);
  const model = await loadModelFolder(async (name) => files.get(name)!, 'merged');
  const merged = await createCpuBackend(model.config, { tensors: model.tensors });
  const withAdapter = await trained.forward(IDS, 1, 6);
  const withoutAdapter = await (await createCpuBackend(LETTER_MODEL, { tensors: new Map([...(await trained.getParameters())].filter(([n]) => !n.startsWith('base_model.'))) })).forward(IDS, 1, 6);
  expect(Math.max(...withAdapter.map((x, i) => Math.abs(x - withoutAdapter[i]!)))).toBeGreaterThan(1e-3); // the adapter matters
  expectClose(await merged.forward(IDS, 1, 6), withAdapter, { atol: 1e-5, rtol: 1e-4, label: 'merged logits' });
});
