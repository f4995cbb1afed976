#!/bin/sh
# Rebuilds the kernel modules from kernels.c, then kernels.generated.ts (every module in base64, so
# Node and the browser load them without fetch):
#   kernels.wasm                  plain SIMD, non-shared memory (one thread)
#   kernels-shared.wasm           plain SIMD, shared memory (threads)
#   kernels-relaxed.wasm          relaxed SIMD (fused multiply-add), non-shared memory
#   kernels-relaxed-shared.wasm   relaxed SIMD, shared memory
# Needs Debian's clang, lld and llvm (apt-get install clang lld llvm: llvm-objdump-14 counts the
# relaxed instructions for renumber-relaxed.mjs); the committed outputs were made by the clang version
# in CLANG_VERSION, and the same version rebuilds them byte for byte.
set -eu
cd "$(dirname "$0")"
FLAGS="--target=wasm32 -msimd128 -matomics -mbulk-memory -O3 -nostdlib -ffreestanding -fno-builtin"
RELAXED="-mrelaxed-simd -DRELAXED_SIMD"
LINK="-Wl,--no-entry -Wl,--export=gemm -Wl,--export=gemm_dot -Wl,--export=gemm_work_floats -Wl,--export=kernels_relaxed_simd -Wl,--export=attention_max_tokens -Wl,--export=attention_forward -Wl,--export=attention_backward -Wl,--export=swiglu_forward -Wl,--export=swiglu_backward -Wl,--export=rmsnorm_forward -Wl,--export=rmsnorm_backward -Wl,--export=logprobs_forward -Wl,--export=logprobs_backward -Wl,--export=adamw_update -Wl,--export=residual_forward -Wl,--export=residual_backward -Wl,--import-memory -Wl,--strip-all -Wl,--initial-memory=1048576 -Wl,--max-memory=2147483648"
OBJDUMP=llvm-objdump-14
command -v "$OBJDUMP" >/dev/null || { echo "build-kernels.sh: $OBJDUMP is missing (apt-get install llvm)" >&2; exit 1; }
# Each build is compiled once and linked twice (a non-shared and a shared memory).
OBJECTS=$(mktemp -d)
trap 'rm -rf "$OBJECTS"' EXIT
clang $FLAGS -c -o "$OBJECTS/plain.o" kernels.c
clang $FLAGS $RELAXED -c -o "$OBJECTS/relaxed.o" kernels.c
clang $FLAGS $LINK -o kernels.wasm "$OBJECTS/plain.o"
clang $FLAGS $LINK -Wl,--shared-memory -o kernels-shared.wasm "$OBJECTS/plain.o"
clang $FLAGS $RELAXED $LINK -o kernels-relaxed.wasm "$OBJECTS/relaxed.o"
clang $FLAGS $RELAXED $LINK -Wl,--shared-memory -o kernels-relaxed-shared.wasm "$OBJECTS/relaxed.o"
for module in kernels-shared.wasm kernels-relaxed-shared.wasm; do
  # Worker threads share one memory, so no kernel may use the shadow stack (a local whose address is
  # taken, or a local array): refuse a build whose code reads or writes a global (the stack pointer).
  if "$OBJDUMP" -d "$module" | grep -qE 'global\.(get|set)'; then
    echo "build-kernels.sh: kernels.c uses the shadow stack (global.get/set in $module); threads would share it" >&2
    exit 1
  fi
done
for module in kernels-relaxed.wasm kernels-relaxed-shared.wasm; do
  # madd() is the only relaxed instruction kernels.c asks for; any other would keep its prototype opcode.
  if "$OBJDUMP" -d "$module" | grep -qE 'f32x4\.fms|f64x2\.fm[as]|\.laneselect|\.relaxed_|q15mulr|dot_i8x16'; then
    echo "build-kernels.sh: $module has a relaxed instruction other than f32x4.fma; renumber-relaxed.mjs knows only that one" >&2
    exit 1
  fi
  node ./renumber-relaxed.mjs "$module" "$("$OBJDUMP" -d "$module" | grep -c 'f32x4\.fma')"
done
clang --version | head -1 > CLANG_VERSION
node ./write-generated.mjs
