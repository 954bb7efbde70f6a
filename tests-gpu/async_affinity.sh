#!/usr/bin/env bash
# Is the per-process bimodality of cudaMallocFromPoolAsync + cudaFreeAsync (about 1.3 or
# 2.1 µs per operation, tests-gpu/async_overhead.sh) a matter of the CPU the process runs on?
# Runs async_overhead pinned to each CPU in turn (taskset), direct and through the C ABI,
# then unpinned, and prints the machine's NUMA layout and GPU affinity. On the GPU machine:
#   bash tests-gpu/async_affinity.sh [PREFIX]     (default .carry/bench-vs-rmm/rmmrs)
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
pfx=${1:-$root/.carry/bench-vs-rmm/rmmrs}
cuda=${CUDA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")}
b=/tmp/async-affinity; mkdir -p $b
g++ -O2 -std=c++17 "$root/tests-gpu/async_overhead.cpp" -I"$pfx/include" -I"$cuda/include" \
  -L"$pfx/lib" -lrmm -L"$cuda/lib64" -L"$cuda/targets/x86_64-linux/lib" -lcudart_static -ldl \
  -lpthread -lrt -Wl,-rpath,"$pfx/lib" -o $b/ao || exit 1
lscpu | grep -E 'NUMA|Model name|Thread|Socket|MHz' | sed 's/^/  /'
nvidia-smi topo -m 2>&1 | sed 's/^/  /'
n=$(nproc)
for v in direct rmm; do
  for ((c = 0; c < n; c++)); do
    echo -n "cpu $c $v: "; RMM_RUNTIME=cuda taskset -c $c $b/ao $v 10000 1
  done
done
for rep in 1 2 3 4; do
  for v in direct rmm; do echo -n "unpinned $v: "; RMM_RUNTIME=cuda $b/ao $v 10000 1; done
done
