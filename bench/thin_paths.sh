#!/usr/bin/env bash
# Builds bench/thin_paths.cpp against the carried prefix (.carry/prefix) twice (with
# librmm.so, and without it) and runs it on the GPU machine: in each process the cudart,
# driver and librmm.so paths of cuda_async and cuda alternate (see the source); then the
# builds with and without librmm.so alternate (does loading it change the cudart path?).
# CHURN=1 runs bench-vs-rmm's W2 and W4 churn plans instead (cuda and cuda_async; the cuda
# runs add rmm::mr::cuda_memory_resource and an RMM-like C++ class, both under perf_anchor's
# counting adaptor). PRE_FREE_GIB=G (passed through to every run) times every path also right
# after a cudaMalloc+cudaFree of G GiB, and prints those medians ÷ the same path's without.
# CASES="async 100000 1 5;cuda 10000 1 3" runs only those cases (the program's arguments;
# "cuda 1000 1 7 w3" with THREADS=T is bench-vs-rmm's W3 on T threads).
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cuda=${CUDA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")}
pfx=$root/.carry/prefix
b=/tmp/thin-paths; mkdir -p $b
flags=(-O2 -std=c++17 -I"$cuda/include" -L"$cuda/lib64" -L"$cuda/targets/x86_64-linux/lib")
g++ "${flags[@]}" -DWITH_RMM -I"$pfx/include" "$root/bench/thin_paths.cpp" -L"$pfx/lib" -lrmm \
  -lcudart -ldl -lpthread -Wl,-rpath,"$pfx/lib" -o $b/tp_rmm || exit 1
g++ "${flags[@]}" "$root/bench/thin_paths.cpp" -lcudart -ldl -lpthread -o $b/tp_plain || exit 1
REPS=${REPS:-3}
if [ -n "${CASES:-}" ]; then
  IFS=';' read -ra cases <<<"$CASES"
  for rep in $(seq "$REPS"); do
    for c in "${cases[@]}"; do
      # shellcheck disable=SC2086  # a case is the program's arguments, split on spaces
      RMM_RUNTIME=cuda $b/tp_rmm $c
    done
  done
  exit 0
fi
if [ -n "${CHURN:-}" ]; then
  for rep in $(seq "$REPS"); do
    RMM_RUNTIME=cuda $b/tp_rmm cuda 20000 1 5 w2
    RMM_RUNTIME=cuda $b/tp_rmm cuda 20000 1 5 w4
  done
  for rep in $(seq "$REPS"); do
    RMM_RUNTIME=cuda $b/tp_rmm async 100000 1 5 w2
    RMM_RUNTIME=cuda $b/tp_rmm async 50000 1 5 w4
  done
  exit 0
fi
for rep in $(seq "$REPS"); do
  RMM_RUNTIME=cuda $b/tp_rmm async 10000 1 7
  RMM_RUNTIME=cuda $b/tp_rmm async 1000 64 7
  RMM_RUNTIME=cuda $b/tp_rmm cuda 2000 1 5
done
for rep in $(seq "$REPS"); do
  echo -n "plain: "; $b/tp_plain async 10000 1 5
  echo -n "rmm:   "; RMM_RUNTIME=cuda $b/tp_rmm async 10000 1 5
done
