#!/bin/sh
# Rebuilds kernels.wasm (non-shared memory) and kernels-shared.wasm (shared memory, for threads) from
# kernels.c, then kernels.generated.ts (both modules in base64, so Node and the browser load them
# without fetch). Needs Debian's clang and lld (apt-get install clang lld); the committed outputs
# were made by the clang version in CLANG_VERSION, and the same version rebuilds them byte for byte.
set -eu
cd "$(dirname "$0")"
FLAGS="--target=wasm32 -msimd128 -matomics -mbulk-memory -O3 -nostdlib -ffreestanding -fno-builtin"
LINK="-Wl,--no-entry -Wl,--export=gemm -Wl,--export=gemm_few_rows -Wl,--export=gemm_work_floats -Wl,--export=attention_forward -Wl,--export=attention_backward -Wl,--export=swiglu_forward -Wl,--export=swiglu_backward -Wl,--export=rmsnorm_forward -Wl,--export=rmsnorm_backward -Wl,--export=logprobs_forward -Wl,--export=logprobs_backward -Wl,--export=adamw_update -Wl,--export=residual_forward -Wl,--export=residual_backward -Wl,--import-memory -Wl,--strip-all -Wl,--initial-memory=1048576 -Wl,--max-memory=2147483648"
clang $FLAGS $LINK -o kernels.wasm kernels.c
clang $FLAGS $LINK -Wl,--shared-memory -o kernels-shared.wasm kernels.c
# Worker threads share one memory, so no kernel may use the shadow stack (a local whose address is
# taken, or a local array): refuse a build whose code reads or writes a global (the stack pointer).
if command -v llvm-objdump-14 >/dev/null && llvm-objdump-14 -d kernels-shared.wasm | grep -qE 'global\.(get|set)'; then
  echo "build-kernels.sh: kernels.c uses the shadow stack (global.get/set in the code); threads would share it" >&2
  exit 1
fi
clang --version | head -1 > CLANG_VERSION
node ./write-generated.mjs
