#!/usr/bin/env bash
# Builds tests-gpu/async_overhead.cpp against the carried prefix (.carry/prefix) with cudart
# static and shared, and runs it on the GPU machine: by default both paths in each process
# (MODE=both), else each path in its own processes (MODE=separate).
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cuda=${CUDA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")}
pfx=$root/.carry/prefix
b=/tmp/async-overhead; mkdir -p $b
for link in static shared; do
  lib=-lcudart_static; [ $link = shared ] && lib=-lcudart
  g++ -O2 -std=c++17 "$root/tests-gpu/async_overhead.cpp" -I"$pfx/include" -I"$cuda/include" \
    -L"$pfx/lib" -lrmm -L"$cuda/lib64" -L"$cuda/targets/x86_64-linux/lib" $lib -ldl -lpthread -lrt \
    -Wl,-rpath,"$pfx/lib" -o $b/ao_$link || exit 1
done
# MODE=both (default): both paths in each process, alternating, 9 runs each (see the
# source); MODE=separate: one path per process, 3 processes each, as first measured.
if [ "${MODE:-both}" = both ]; then
  for rep in 1 2 3; do
    for link in static shared; do
      for c in "10000 1" "1000 64"; do
        echo -n "cudart $link: "; RMM_RUNTIME=cuda $b/ao_$link both $c 9
      done
    done
  done
  exit 0
fi
for rep in 1 2 3; do
  for link in static shared; do
    for v in direct rmm; do
      echo -n "cudart $link: "; RMM_RUNTIME=cuda $b/ao_$link $v 10000 1
      echo -n "cudart $link: "; RMM_RUNTIME=cuda $b/ao_$link $v 1000 64
    done
  done
done
