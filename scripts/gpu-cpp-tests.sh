#!/usr/bin/env bash
# Builds and runs the C++ suites, the C examples and the C++ consumer on a GPU machine
# against an installed prefix carried in .carry/prefix (made with `cmake --install`), with
# CUDA's headers on the include path so rmm::cuda_stream_view wraps cudaStream_t.
set -uo pipefail
cd "$(dirname "$0")/.."
prefix="$PWD/.carry/prefix"
cuda_inc="$(dirname "$(command -v nvcc)")/../include"
fail=0
for project in tests/cpp examples/c examples/cpp; do
  echo "== $project against $prefix"
  cmake -S "$project" -B "/tmp/gpu-$project" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_CXX_FLAGS="-isystem $cuda_inc" -DCMAKE_CUDA_COMPILER="$(command -v nvcc)" \
    -DCMAKE_BUILD_TYPE=Release >/dev/null || fail=1
  cmake --build "/tmp/gpu-$project" --parallel 16 2>&1 | grep -E "error|warning" | head -20
  for mode in cuda auto; do
    RMM_RUNTIME=$mode ctest --test-dir "/tmp/gpu-$project" --output-on-failure --parallel 8 \
      2>&1 | grep -E "tests passed|tests failed|Failed|\*\*\*|Expected|Which is|Value of|Actual|exception" | head -40
    [ "${PIPESTATUS[0]}" = 0 ] || fail=1
  done
done
echo "== stream type seen by the C++ wrapper"
printf '#include <rmm/cuda_stream_view.hpp>\n#include <type_traits>\n#include <cuda_runtime_api.h>\nstatic_assert(std::is_same_v<decltype(rmm::cuda_stream_view{}.value()), cudaStream_t>, "stream type");\nint main(){}\n' > /tmp/st.cpp
g++ -std=c++17 -isystem "$cuda_inc" -I"$prefix/include" /tmp/st.cpp -o /tmp/st && echo "cudaStream_t: yes" || fail=1
echo "== CCCL seen by nvcc, and whether rmm's references interoperate with cuda::mr"
printf '#include <rmm/resource_ref.hpp>\n' > /tmp/cccl.cu
for flag in "" -DLIBCUDACXX_ENABLE_EXPERIMENTAL_MEMORY_RESOURCE; do
  echo "flags: ${flag:-none}"
  nvcc -std=c++17 $flag -I"$prefix/include" -E -Xcompiler -dM /tmp/cccl.cu 2>&1 |
    grep -E "define (CCCL_MAJOR_VERSION|CCCL_MINOR_VERSION|RMM_HAS_CUDA_MR|THRUST_VERSION) " || true
done
echo "== copies captured into a CUDA graph (RMM 26.10 API, CCCL 3.5: tests/gpu/capture_copy.cu)"
cccl35="${RMM_CCCL_3_5:-/tmp/cccl-3.5}"
if [[ ! -d "$cccl35" && -f .carry/rmm-suites/cccl-3.5.tar.xz ]]; then
  tar -xJf .carry/rmm-suites/cccl-3.5.tar.xz -C "$(dirname "$cccl35")"
fi
nvcc -std=c++20 -DRMM_API_VERSION=2610 -I"$cccl35" -I"$prefix/include" tests/gpu/capture_copy.cu \
  -L"$prefix/lib" -lrmm -Xlinker -rpath -Xlinker "$prefix/lib" -o /tmp/capture_copy &&
  RMM_RUNTIME=cuda /tmp/capture_copy || fail=1
echo "== C example output (RMM_RUNTIME=cuda)"
RMM_RUNTIME=cuda /tmp/gpu-examples/c/rmm_c_basic | tail -15
exit $fail
