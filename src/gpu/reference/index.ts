/**
 * The CPU reference of every engine op, plain TypeScript over Float32Array: the oracle the WGSL
 * kernels are tested against, and the building blocks of the CPU backend. Argument order is
 * outputs, inputs, weights, then sizes; backward functions accumulate (+=) into gradients.
 */
export { embeddingBackward, embeddingForward } from './embedding.ts';
export { rmsnormBackward, rmsnormForward } from './rmsnorm.ts';
export { matmulBackward, matmulForward } from './matmul.ts';
export { ropeBackward, ropeForward } from './rope.ts';
export { attentionBackward, attentionForward } from './attention.ts';
export { swigluBackward, swigluForward } from './swiglu.ts';
export { residualBackward, residualForward } from './residual.ts';
export { crossEntropyForward, entropyForward, logprobsBackward, logprobsBackwardInPlace, logprobsForward } from './logprobs.ts';
export { adamwUpdate, clipFactor, globalGradNorm, scaleInPlace, type AdamWHyperparameters } from './adamw.ts';
export { loraBackward, loraForward } from './lora.ts';
