/**
 * "Our training step / jax-js's training step", measured in one run on one adapter: our WebGPU
 * backend's zeroGrad + backward + step (forward, backward, grad norm, clip, AdamW, read-backs)
 * against the jax-js peer (bench/jax-train-peer.ts) starting from the same parameters, on the same
 * random (B, T) batch, interleaved step by step, median of `reps` steps after one warm-up step each.
 * The objectives of the first step are compared (they must agree: same model, same weights). No Node
 * APIs: bench/train.ts runs it in Node (Dawn), bench/gpu-page.ts in Chromium. jax-js must be
 * initialised on WebGPU first. Not a test.
 */
import type { OptimizerStepOptions } from '../src/gpu/model/backend.ts';
import type { ModelConfig } from '../src/gpu/model/config.ts';
import type { GPUContext } from '../src/gpu/webgpu/device.ts';
import { createWebGPUBackend } from '../src/gpu/webgpu/webgpu-backend.ts';
import { createJaxTrainer } from './jax-train-peer.ts';

/** The result of one comparison. */
export interface TrainPeerResult {
  model: string;
  B: number;
  T: number;
  oursMs: number;
  jaxMs: number;
  /** jax-js step time / ours: above 1 means ours is faster. */
  speedup: number;
  /** Objective Σ w·logp of the first step: ours and jax-js's (same weights and batch). */
  objective: { ours: number; jax: number };
}

const OPTIMIZER: OptimizerStepOptions = { lr: 1e-3, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.01, maxGradNorm: 1 };

/** Times our step and the jax-js step on `config` at (B, T), `reps` interleaved steps each after one warm-up step. */
export async function compareTrainStep(context: GPUContext, name: string, config: ModelConfig, B: number, T: number, reps: number): Promise<TrainPeerResult> {
  const N = B * T;
  const V = config.vocab_size;
  let seed = 12345;
  const next = (): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % V;
  const ids = Int32Array.from({ length: N }, next);
  const targets = Int32Array.from({ length: N }, next);
  const weights = new Float32Array(N).fill(-1 / N);
  const backend = await createWebGPUBackend(context, config, { seed: 1 });
  const jax = createJaxTrainer(config, await backend.getParameters(), B, T, OPTIMIZER);
  try {
    const ours = async (): Promise<number> => {
      await backend.zeroGrad();
      const value = await backend.backward(ids, targets, weights, B, T, 1);
      await backend.step(OPTIMIZER);
      return value;
    };
    const objective = { ours: await ours(), jax: await jax.step(ids, targets, weights) };
    const oursTimes: number[] = [];
    const jaxTimes: number[] = [];
    for (let rep = 0; rep < reps; rep++) {
      const order = rep % 2 === 0 ? ['ours', 'jax'] : ['jax', 'ours'];
      for (const who of order) {
        const started = performance.now();
        if (who === 'ours') await ours();
        else await jax.step(ids, targets, weights);
        (who === 'ours' ? oursTimes : jaxTimes).push(performance.now() - started);
      }
    }
    const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const [oursMs, jaxMs] = [median(oursTimes), median(jaxTimes)];
    return { model: name, B, T, oursMs, jaxMs, speedup: jaxMs / oursMs, objective };
  } finally {
    jax.dispose();
    backend.dispose();
  }
}
