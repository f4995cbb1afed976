/**
 * The attention kernels (the vec4 ones for head sizes that are multiples of 4, the scalar ones
 * otherwise) against the CPU reference on Mesa's lavapipe, the second CPU Vulkan driver: the checks
 * of test/browser/gpu/kernel-cases.ts on an adapter with other rounding and scheduling than
 * SwiftShader. No lavapipe is a failure, never a skip.
 */
import { ATTENTION_CASES } from '../browser/gpu/kernel-cases.ts';
import { testKernelCasesOnLavapipe } from '../support/lavapipe.ts';

testKernelCasesOnLavapipe('gpu-node attention tests on lavapipe', ATTENTION_CASES);
