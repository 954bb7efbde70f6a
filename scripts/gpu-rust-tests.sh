#!/usr/bin/env bash
# Runs the prebuilt Rust test binaries and the CUDA kernel test on a GPU machine that has no
# Rust toolchain. Expects .carry/bin (test executables from `cargo test --release --no-run`)
# and .carry/lib/librmm.so, built on a machine with cargo by scripts/make-carry.sh (see
# docs/gpu-runs.md, "Rust suites and the CUDA kernel test", for the latest result).
# MODES (default "cuda auto") lists the RMM_RUNTIME values the binaries run under.
set -uo pipefail
cd "$(dirname "$0")/.."
fail=0
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
for mode in ${MODES:-cuda auto}; do
  for t in .carry/bin/*; do
    echo "== RMM_RUNTIME=$mode $(basename "$t")"
    RMM_RUNTIME=$mode "$t" --test-threads=4 2>&1 | grep -E "^test result|FAILED|panicked|error" || fail=1
    [ "${PIPESTATUS[0]}" = 0 ] || { echo "FAILED: $t ($mode)"; fail=1; }
  done
done
echo "== gpu_smoke (verbose)"
RMM_RUNTIME=cuda .carry/bin/gpu_smoke-* --nocapture 2>&1 | tail -20
echo "== kernel test (nvcc)"
nvcc -O2 -std=c++17 -Iinclude tests/gpu/kernel_test.cu -L.carry/lib -lrmm -Xlinker -rpath -Xlinker "$PWD/.carry/lib" -o /tmp/kernel_test \
  && RMM_RUNTIME=cuda /tmp/kernel_test && RMM_RUNTIME=auto /tmp/kernel_test | head -1 || fail=1
exit $fail
