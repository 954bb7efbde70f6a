#!/usr/bin/env bash
# GPU evidence after the per-thread default stream fixes (pool fronts emptied by another
# thread, the vmm pool's release threshold): the Rust unit suite with RMM_RUNTIME=cuda, the
# C ABI fuzzer (sanitized over the pools' kinds, fast over every kind), then rmm-bench's W4 and
# large-block W1 cells for pool and vmm_pool in ROUNDS fresh processes (default 3). From the
# project root on the GPU machine, carrying .carry/bin, .carry/prefix and .carry/rmm-bench
# (scripts/make-carry.sh). Output: $OUT/per_thread_vmm.log and the bench JSON (bench-*.json).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-/tmp/per-thread-vmm}; mkdir -p "$OUT"
exec > >(tee "$OUT/per_thread_vmm.log") 2>&1
stamp() { echo "== [$SECONDS s] $*"; }
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv,noheader
export RMM_RUNTIME=cuda
stamp "Rust unit suite (RMM_RUNTIME=cuda)"
timeout 240 .carry/bin/rmm-* --test-threads=4 2>&1 | grep -E "^test result|FAILED|panicked"
stamp "fuzzer: asan over the pools' kinds"
BUILDS=asan SEEDS="1 2" THREADS="4 16" ASAN_SECONDS=${ASAN_SECONDS:-60} \
  KINDS=pool,vmm_pool,vmm_pool_trim,shared_pool,shared_vmm_pool,shared_binning \
  timeout 200 bash scripts/gpu-fuzz.sh 2>&1 | grep -E "^gpu-fuzz|DEFECT|^(asan|fast) "
stamp "fuzzer: fast over every kind"
BUILDS=fast SEEDS="3 4" THREADS="8 16" FAST_SECONDS=${FAST_SECONDS:-80} \
  timeout 200 bash scripts/gpu-fuzz.sh 2>&1 | grep -E "^gpu-fuzz|DEFECT|^(asan|fast) "
stamp "rmm-bench: pool and vmm_pool, W4 and large-block W1"
for r in $(seq 1 "${ROUNDS:-3}"); do
  .carry/rmm-bench --resources pool,vmm_pool --workloads w4,w1 --w1-cases 1000:64,250:4096 \
    --json "$OUT/bench-$r.json" 2>&1 | grep -E "^(pool|vmm_pool) " | sed "s/^/$r /"
done
stamp done
