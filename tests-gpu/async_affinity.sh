#!/usr/bin/env bash
# Is the per-process bimodality of cudaMallocFromPoolAsync + cudaFreeAsync (about 1.3 or
# 2.1 µs per operation) a matter of the CPU the process runs on? Runs thin_paths (cudart,
# driver and librmm.so's C ABI alternating in one process) pinned to each CPU in turn
# (taskset), then unpinned, and prints the machine's NUMA layout and GPU affinity. On the
# GPU machine:
#   bash tests-gpu/async_affinity.sh [PREFIX]     (default .carry/bench-vs-rmm/rmmrs)
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
pfx=${1:-$root/.carry/bench-vs-rmm/rmmrs}
cuda=${CUDA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")}
b=/tmp/async-affinity; mkdir -p $b
g++ -O2 -std=c++17 -DWITH_RMM "$root/tests-gpu/thin_paths.cpp" -I"$pfx/include" -I"$cuda/include" \
  -L"$pfx/lib" -lrmm -L"$cuda/lib64" -L"$cuda/targets/x86_64-linux/lib" -lcudart -ldl \
  -lpthread -Wl,-rpath,"$pfx/lib" -o $b/tp || exit 1
lscpu | grep -E 'NUMA|Model name|Thread|Socket|MHz' | sed 's/^/  /'
nvidia-smi topo -m 2>&1 | sed 's/^/  /'
n=$(nproc)
for ((c = 0; c < n; c++)); do
  echo -n "cpu $c: "; RMM_RUNTIME=cuda taskset -c $c $b/tp async 10000 1 3
done
for rep in 1 2 3 4; do
  echo -n "unpinned: "; RMM_RUNTIME=cuda $b/tp async 10000 1 3
done
