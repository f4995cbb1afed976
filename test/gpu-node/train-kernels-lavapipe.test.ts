/**
 * The training-step kernels with vec4 variants (attention forward and backward, swiglu and residual
 * backward, AdamW) and their scalar fallbacks against the CPU reference on Mesa's lavapipe, the second
 * CPU Vulkan driver: the checks of test/support/gpu/kernel-cases.ts on an adapter with other rounding and
 * scheduling than SwiftShader. No lavapipe is a failure, never a skip.
 */
import { ADAMW_CASES, ATTENTION_CASES, SWIGLU_RESIDUAL_CASES } from '../support/gpu/kernel-cases.ts';
import { testKernelCasesOnLavapipe } from '../support/lavapipe.ts';

testKernelCasesOnLavapipe('gpu-node training kernel tests on lavapipe', [...ATTENTION_CASES, ...SWIGLU_RESIDUAL_CASES, ...ADAMW_CASES]);
