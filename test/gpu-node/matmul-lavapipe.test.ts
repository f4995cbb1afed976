/**
 * Every matmul kernel variant, forced, on Mesa's lavapipe, the second CPU Vulkan driver: the checks of
 * test/support/gpu/matmul-variant-cases.ts on an adapter with other rounding and scheduling than
 * SwiftShader, one case per variant with every switch on (each pipeline costs Mesa 10–35 s of
 * LLVM on a machine whose shader cache is cold). No lavapipe is a failure, never a skip.
 */
import { MATMUL_VARIANT_CASES_ONE_SHAPE } from '../support/gpu/matmul-variant-cases.ts';
import { testKernelCasesOnLavapipe } from '../support/lavapipe.ts';

testKernelCasesOnLavapipe('gpu-node matmul variant tests on lavapipe', MATMUL_VARIANT_CASES_ONE_SHAPE);
