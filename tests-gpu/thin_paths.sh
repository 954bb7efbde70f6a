#!/usr/bin/env bash
# Builds tests-gpu/thin_paths.cpp against the carried prefix (.carry/prefix) twice (with
# librmm.so, and without it) and runs it on the GPU machine: in each process the cudart,
# driver and librmm.so paths of cuda_async and cuda alternate (see the source); then the
# builds with and without librmm.so alternate (does loading it change the cudart path?).
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cuda=${CUDA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")}
pfx=$root/.carry/prefix
b=/tmp/thin-paths; mkdir -p $b
flags=(-O2 -std=c++17 -I"$cuda/include" -L"$cuda/lib64" -L"$cuda/targets/x86_64-linux/lib")
g++ "${flags[@]}" -DWITH_RMM -I"$pfx/include" "$root/tests-gpu/thin_paths.cpp" -L"$pfx/lib" -lrmm \
  -lcudart -ldl -lpthread -Wl,-rpath,"$pfx/lib" -o $b/tp_rmm || exit 1
g++ "${flags[@]}" "$root/tests-gpu/thin_paths.cpp" -lcudart -ldl -lpthread -o $b/tp_plain || exit 1
REPS=${REPS:-3}
for rep in $(seq "$REPS"); do
  RMM_RUNTIME=cuda $b/tp_rmm async 10000 1 7
  RMM_RUNTIME=cuda $b/tp_rmm async 1000 64 7
  RMM_RUNTIME=cuda $b/tp_rmm cuda 2000 1 5
done
for rep in $(seq "$REPS"); do
  echo -n "plain: "; $b/tp_plain async 10000 1 5
  echo -n "rmm:   "; RMM_RUNTIME=cuda $b/tp_rmm async 10000 1 5
done
