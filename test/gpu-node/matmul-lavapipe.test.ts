/**
 * Every matmul kernel variant, forced, on Mesa's lavapipe, the second CPU Vulkan driver: the checks of
 * test/browser/gpu/matmul-variant-cases.ts on an adapter with other rounding and scheduling than
 * SwiftShader. No lavapipe is a failure, never a skip.
 */
import { MATMUL_VARIANT_CASES } from '../browser/gpu/matmul-variant-cases.ts';
import { testKernelCasesOnLavapipe } from '../support/lavapipe.ts';

testKernelCasesOnLavapipe('gpu-node matmul variant tests on lavapipe', MATMUL_VARIANT_CASES);
