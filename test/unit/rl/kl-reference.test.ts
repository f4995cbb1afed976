// The KL reference on the CPU backend (LoRA switched off; a frozen copy for full fine-tuning) and
// GRPO's KL penalty with it: the KL to the reference grows as LoRA trains, and β holds it down.
import { describe, expect, test } from 'vitest';
import { createCpuBackend } from '../../../src/gpu/model/cpu-backend.ts';
import type { LoraConfig } from '../../../src/gpu/model/layout.ts';
import { environmentRollouts, GrpoTrainer, type GrpoOptions } from '../../../src/rl/grpo-trainer.ts';
import { LETTER_MODEL, LetterPolicy, makeLetterEnv } from '../../support/letter-task.ts';
import { checkFullFineTuneReference, checkLoraReference } from './kl-reference-cases.ts';

const LORA: LoraConfig = { rank: 4, alpha: 8, targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] };
const OPTIONS: GrpoOptions = { steps: 12, tasksPerStep: 2, groupSize: 8, maxTokens: 4, schedule: { lr: 5e-2 }, maxAsync: 0, seed: 4 };

async function meanKl(klBeta: number, modelSeed: number): Promise<number[]> {
  const backend = await createCpuBackend(LETTER_MODEL, { seed: modelSeed }, { lora: LORA, loraSeed: modelSeed + 1 });
  const policy = new LetterPolicy(backend);
  const metrics = await new GrpoTrainer(environmentRollouts(makeLetterEnv(), policy), backend, policy, { ...OPTIONS, klBeta }).run();
  return metrics.map((m) => m.kl);
}

describe('KL reference', () => {
  test('LoRA: the reference log-probs are the base model\'s (no adapters; adapters with B = 0)', () => checkLoraReference(createCpuBackend, 0));

  test('full fine-tuning: the reference is the frozen starting weights', () => checkFullFineTuneReference(createCpuBackend, 0));

  test('GRPO with LoRA: KL is 0 while B is 0, grows as the adapters train, and a large β keeps it lower', async () => {
    for (const seed of [3, 5]) {
      const weak = await meanKl(1e-4, seed);
      const strong = await meanKl(1, seed);
      expect(weak[0]).toBe(0); // B starts at zero: policy = reference
      expect(weak.slice(-3).every((kl) => kl > 1e-3), `seed ${seed}: ${weak}`).toBe(true);
      const tail = (values: number[]) => values.slice(-4).reduce((a, b) => a + b, 0) / 4;
      expect(tail(strong), `seed ${seed}: β 1 ${strong} vs β 1e-4 ${weak}`).toBeLessThan(tail(weak) * 0.75);
    }
  });

  test('GRPO with full fine-tuning and β > 0 freezes the starting weights, and a resumed run without them is refused', async () => {
    const backend = await createCpuBackend(LETTER_MODEL, { seed: 7 });
    const start = await backend.getParameters();
    const policy = new LetterPolicy(backend);
    const metrics = await new GrpoTrainer(environmentRollouts(makeLetterEnv(), policy), backend, policy, { ...OPTIONS, steps: 3, klBeta: 0.1 }).run();
    expect(metrics[0]!.kl).toBe(0);
    expect(metrics.at(-1)!.kl).toBeGreaterThan(0);
    const frozen = (await backend.getReference())!;
    for (const [name, tensor] of start) expect(frozen.get(name)!.data, name).toEqual(tensor.data);

    const resumed = await createCpuBackend(LETTER_MODEL, { seed: 7 });
    const resumedPolicy = new LetterPolicy(resumed);
    await expect(new GrpoTrainer(environmentRollouts(makeLetterEnv(), resumedPolicy), resumed, resumedPolicy, { ...OPTIONS, startStep: 3, klBeta: 0.1 }).run()).rejects.toThrow(
      'needs the reference weights it started from',
    );
  });
});
