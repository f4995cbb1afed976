/**
 * The GPU state of one (B, T) batch shape of the WebGPU backend: its activations and their
 * gradients, the token inputs, the LM head's chunk scratch, and the plans the backend records into
 * it. `allocateBatch` makes the buffers as the step-memory accounting lists them (the caller passes
 * that plan); `destroyBatch` frees them with the plans. It records nothing itself.
 */
import type { ModelConfig } from '../model/config.ts';
import type { LoraConfig } from '../model/layout.ts';
import { BatchActivations } from './activations.ts';
import { createTensor, KernelPlan, type GPUTensor, type Kernels } from './kernels.ts';
import { vocabularyScratchValues, type LmHeadTensors, type TemperatureDispatch } from './lm-head.ts';
import type { RowChunkTensor } from './param-store.ts';
import type { BatchMemoryPlan } from './step-memory.ts';
import { createStorage, LOWER_THE_BATCH } from './storage.ts';

/** The GPU state of one (B, T) batch shape: activations, their gradients, inputs and the recorded plans. */
export interface BatchState {
  B: number;
  T: number;
  activations: BatchActivations; // activations and their gradients, plain or checkpointed
  ids: GPUTensor; // (B*T) i32
  targets: GPUTensor; // (B*T) i32
  weights: GPUTensor; // (B*T) f32, the dlogprobs of backward
  forwardPlan: KernelPlan; // ids → lnf (the final norm's output; the LM head runs in chunks in the plans below)
  referencePlan: KernelPlan | null; // ids → logprobs under the KL reference (LoRA branch skipped, or the frozen copy), LM head included; recorded on first use
  referenceTemperatureDispatches: TemperatureDispatch[]; // of referencePlan
  positions: GPUTensor; // (B*T) i32
  lmHead: LmHeadTensors; // whole-batch views and the (rows, V) logits scratch
  lmHeadRows: number; // tokens per LM-head chunk
  logprobsPlan: KernelPlan; // lnf, targets → logprobs, chunk by chunk
  backwardPlan: KernelPlan; // weights → logprobs and gradients (the LM head chunk by chunk, fused with its loss)
  temperatureDispatches: TemperatureDispatch[]; // of both plans: their params hold the temperature
  temperature: number;
  dscores: GPUTensor; // (groupSequences, NH, T, T) attention's score gradients, one group at a time
  dhidden: GPUTensor; // (B*T, rank) a LoRA branch's hidden gradient
  scratch: GPUBuffer[]; // every buffer above that destroyBatch frees beside activations, ids, targets and weights
}

/** Allocates a (B, T) batch's buffers as `memory` plans them (checkpointing, f16 layer outputs, LM-head rows) and empty plans; `lmHeadWeight` is the head's bindings in row chunks. */
export function allocateBatch(
  device: GPUDevice,
  kernels: Kernels,
  config: ModelConfig,
  lora: LoraConfig | null,
  memory: BatchMemoryPlan,
  layerGroupBytes: number,
  lmHeadWeight: RowChunkTensor[],
): BatchState {
  const { B, T } = memory;
  const N = B * T;
  const activations = new BatchActivations(device, config, B, T, lora, memory.checkpointing, layerGroupBytes, memory.halfOutputs);
  const positions = new Int32Array(N); // (B*T) t within its right-padded row
  for (let b = 0; b < B; b++) for (let t = 0; t < T; t++) positions[b * T + t] = t;
  const { num_attention_heads: NH } = config;
  const dscores = createTensor(device, activations.groupSequences * NH * T * T * 4, 'attention dscores');
  const dhidden = createTensor(device, N * (lora?.rank ?? 1) * 4, 'lora dhidden');
  const positionsTensor = createTensor(device, positions, 'positions');
  const V = config.vocab_size;
  const lmHeadRows = memory.lmHeadRows;
  const lmHeadChunk = createStorage(device, lmHeadRows * V, 'LM head logits chunk', 4, LOWER_THE_BATCH);
  const columnValues = vocabularyScratchValues(
    lmHeadWeight.map((chunk) => chunk.rows),
    lmHeadRows,
  );
  const columns = columnValues > 0 ? createStorage(device, columnValues, 'LM head vocabulary chunk', 4, LOWER_THE_BATCH) : null;
  const entropy = createTensor(device, N * 4, 'entropy');
  const targets = createTensor(device, N * 4, 'targets');
  const lmHead: LmHeadTensors = {
    lnf: activations.act('lnf'),
    weight: lmHeadWeight,
    targets,
    logprobs: activations.act('logprobs'),
    entropy,
    chunk: { buffer: lmHeadChunk, offset: 0, size: lmHeadRows * V * 4 },
    columns: columns === null ? null : { buffer: columns, offset: 0, size: columnValues * 4 },
  };
  const batch: BatchState = {
    B,
    T,
    activations,
    ids: createTensor(device, N * 4, 'ids'),
    targets,
    weights: createTensor(device, N * 4, 'logprob weights'),
    forwardPlan: new KernelPlan(kernels),
    referencePlan: null,
    referenceTemperatureDispatches: [],
    positions: positionsTensor,
    lmHead,
    lmHeadRows,
    logprobsPlan: new KernelPlan(kernels),
    backwardPlan: new KernelPlan(kernels),
    temperatureDispatches: [],
    temperature: 1,
    dscores,
    dhidden,
    scratch: [dscores.buffer, dhidden.buffer, positionsTensor.buffer, lmHeadChunk, entropy.buffer, ...(columns === null ? [] : [columns])],
  };
  return batch;
}

/** Frees a batch's plans and buffers. */
export function destroyBatch(batch: BatchState): void {
  for (const plan of [batch.forwardPlan, batch.referencePlan, batch.logprobsPlan, batch.backwardPlan]) plan?.destroy();
  batch.activations.destroy();
  for (const buffer of [batch.ids.buffer, batch.targets.buffer, batch.weights.buffer, ...batch.scratch]) buffer.destroy();
}
