/**
 * The GPU sampler (sample_tokens.wgsl) on Mesa's lavapipe, the second CPU Vulkan driver: the checks of
 * test/support/gpu/sampler-cases.ts on an adapter with other rounding and scheduling than SwiftShader.
 * No lavapipe is a failure, never a skip.
 */
import { SAMPLER_CASES } from '../support/gpu/sampler-cases.ts';
import { testKernelCasesOnLavapipe } from '../support/lavapipe.ts';

testKernelCasesOnLavapipe('gpu-node sampler tests on lavapipe', SAMPLER_CASES);
