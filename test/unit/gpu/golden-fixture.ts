/**
 * The PyTorch golden fixtures (test/fixtures/golden, written by scripts/golden/make_golden.py) and
 * the checks every model backend must pass against them: logits, log-probs at two temperatures,
 * the loss, every parameter's gradient, and the losses of 10 AdamW steps. Free of Node APIs:
 * reading the files is the caller's job (fs in Node; `?url` + fetch in a browser test), e.g.
 *
 *   const fixture = parseGoldenFixture(await (await fetch(jsonUrl)).text(), new Uint8Array(await (await fetch(stUrl)).arrayBuffer()));
 *   await checkBackendAgainstGolden(fixture, (config, tensors) => createWebGPUBackend(config, { tensors }));
 */
import { parseSafetensors } from '../../../src/gpu/io/safetensors.ts';
import type { ModelBackend, NamedTensors } from '../../../src/gpu/model/backend.ts';
import { parseModelConfig, type ModelConfig } from '../../../src/gpu/model/config.ts';
import { expectClose, type CloseOptions } from '../../support/expect-close.ts';

/** The generator version these checks expect; make_golden.py's GENERATOR_VERSION. */
export const GOLDEN_GENERATOR_VERSION = 1;

/** The fixture variants: plain Llama (untied head), Qwen2-style QKV bias (tied), Qwen3-style q/k norm (tied, head_dim·heads ≠ hidden). */
export const GOLDEN_VARIANTS = ['plain', 'qkv_bias', 'qk_norm'] as const;

/** What to do when a golden check fails. */
export const REGENERATE_HINT =
  'If the model semantics changed on purpose, regenerate the fixtures with `/usr/bin/python3 scripts/golden/make_golden.py` ' +
  '(needs Debian\'s python3-torch) and commit test/fixtures/golden.';

/** One variant's fixture, parsed. */
export interface GoldenFixture {
  variant: string;
  config: ModelConfig;
  B: number;
  T: number;
  ids: Int32Array; // (B*T)
  targets: Int32Array; // (B*T)
  weights: Float32Array; // (B*T) loss = Σ weights·logprobs
  lowTemperature: number;
  loss: number;
  params: NamedTensors; // initial parameters, Hugging Face names
  grads: NamedTensors; // ∂loss/∂param, same names
  logits: Float32Array; // (B, T, V)
  logprobs: Float32Array; // (B*T) at temperature 1
  logprobsLowTemperature: Float32Array; // (B*T) at lowTemperature
  optimizer: { lr: number; beta1: number; beta2: number; eps: number; weight_decay: number; max_grad_norm: number };
  losses: number[]; // loss before each of the 10 steps
  gradNorms: number[]; // pre-clip gradient norm of each step
}

/** Tolerances of the golden checks, for a backend computing in f32 against the float64 oracle. */
export interface GoldenTolerances {
  logits: CloseOptions;
  logprobs: CloseOptions;
  loss: CloseOptions;
  grads: CloseOptions;
  losses: CloseOptions;
}

/** Tolerances the CPU backend meets; a GPU backend should meet them too (f32 accumulation everywhere). */
export const GOLDEN_TOLERANCES: GoldenTolerances = {
  logits: { atol: 2e-5, rtol: 1e-4 },
  logprobs: { atol: 2e-5, rtol: 1e-4 },
  loss: { atol: 1e-5, rtol: 1e-5 },
  grads: { atol: 2e-6, rtol: 2e-3 },
  losses: { atol: 1e-4, rtol: 1e-3 },
};

/** Parses one variant from its .json text and .safetensors bytes. */
export function parseGoldenFixture(jsonText: string, safetensorsBytes: Uint8Array): GoldenFixture {
  const meta = JSON.parse(jsonText) as Record<string, unknown>;
  if (meta.generator_version !== GOLDEN_GENERATOR_VERSION) {
    throw new Error(`golden fixture ${meta.variant}: generator_version ${meta.generator_version}, expected ${GOLDEN_GENERATOR_VERSION}. ${REGENERATE_HINT}`);
  }
  const variant = String(meta.variant);
  const { tensors } = parseSafetensors(safetensorsBytes, `test/fixtures/golden/${variant}.safetensors`);
  const params: NamedTensors = new Map();
  const grads: NamedTensors = new Map();
  for (const [name, tensor] of tensors) {
    if (name.startsWith('param.')) params.set(name.slice('param.'.length), tensor);
    if (name.startsWith('grad.')) grads.set(name.slice('grad.'.length), tensor);
  }
  const data = (name: string): Float32Array => {
    const tensor = tensors.get(name);
    if (tensor === undefined) throw new Error(`golden fixture ${variant}: no tensor ${name}. ${REGENERATE_HINT}`);
    return tensor.data;
  };
  const optimizer = meta.optimizer as GoldenFixture['optimizer'];
  return {
    variant,
    config: parseModelConfig(meta.config, `golden fixture ${variant}`),
    B: meta.B as number,
    T: meta.T as number,
    ids: Int32Array.from(meta.ids as number[]),
    targets: Int32Array.from(meta.targets as number[]),
    weights: Float32Array.from(meta.weights as number[]),
    lowTemperature: meta.low_temperature as number,
    loss: meta.loss as number,
    params,
    grads,
    logits: data('logits'),
    logprobs: data('logprobs'),
    logprobsLowTemperature: data('logprobs_low_temperature'),
    optimizer,
    losses: meta.losses as number[],
    gradNorms: meta.grad_norms as number[],
  };
}

/** Runs expectClose and adds the regeneration hint to a failure. */
function expectGolden(actual: ArrayLike<number> | number, expected: ArrayLike<number> | number, options: CloseOptions): void {
  try {
    expectClose(actual, expected, options);
  } catch (error) {
    throw new Error(`${(error as Error).message}\n${REGENERATE_HINT}`);
  }
}

/**
 * Checks a backend against a fixture: createBackend builds a fresh, full-training (no LoRA) backend
 * holding the given initial parameters; the checks throw on the first mismatch.
 */
export async function checkBackendAgainstGolden(
  fixture: GoldenFixture,
  createBackend: (config: ModelConfig, tensors: NamedTensors) => Promise<ModelBackend>,
  tolerances: GoldenTolerances = GOLDEN_TOLERANCES,
): Promise<void> {
  const { B, T, ids, targets, weights, variant } = fixture;
  const backend = await createBackend(fixture.config, fixture.params);
  try {
    const label = (what: string): string => `golden ${variant} (${backend.kind}): ${what}`;
    expectGolden(await backend.forward(ids, B, T), fixture.logits, { ...tolerances.logits, label: label('logits') });
    expectGolden(await backend.logprobs(ids, targets, B, T, 1), fixture.logprobs, { ...tolerances.logprobs, label: label('logprobs') });
    expectGolden(await backend.logprobs(ids, targets, B, T, fixture.lowTemperature), fixture.logprobsLowTemperature, {
      ...tolerances.logprobs,
      label: label(`logprobs at temperature ${fixture.lowTemperature}`),
    });

    await backend.zeroGrad();
    const loss = await backend.backward(ids, targets, weights, B, T, 1);
    expectGolden(loss, fixture.loss, { ...tolerances.loss, label: label('loss') });
    const params = await backend.getParameters();
    const names = [...fixture.grads.keys()];
    if (names.length !== params.size) throw new Error(label(`backend has ${params.size} parameters, the fixture ${names.length}. ${REGENERATE_HINT}`));
    const grads = await backend.getGradients();
    for (const name of names) expectGolden(grads.get(name)!.data, fixture.grads.get(name)!.data, { ...tolerances.grads, label: label(`gradient of ${name}`) });

    // 10 AdamW steps on the same batch; the loss before each step
    const { lr, beta1, beta2, eps, weight_decay: weightDecay, max_grad_norm: maxGradNorm } = fixture.optimizer;
    const losses: number[] = [];
    const gradNorms: number[] = [];
    for (let step = 0; step < fixture.losses.length; step++) {
      await backend.zeroGrad();
      losses.push(await backend.backward(ids, targets, weights, B, T, 1));
      gradNorms.push((await backend.step({ lr, beta1, beta2, eps, weightDecay, maxGradNorm })).gradNorm);
    }
    expectGolden(losses, fixture.losses, { ...tolerances.losses, label: label('losses of 10 AdamW steps') });
    expectGolden(gradNorms, fixture.gradNorms, { ...tolerances.losses, label: label('grad norms of 10 AdamW steps') });
  } finally {
    backend.dispose();
  }
}
