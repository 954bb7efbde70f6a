#!/usr/bin/env bash
# Drop-in check on the GPU machine: builds RMM 25.02's own C++ test suite (its tests/ folder,
# which this repository does not contain) against rmm-rs's installed prefix, unchanged, one
# executable per RMM test target, and runs each with RMM_RUNTIME=cuda. Prints one line per
# target and a closing line "rmm-own-tests: N passed, N failed" (counts of gtest cases).
#
#   scripts/gpu-rmm-own-tests.sh <rmm-source-root> [prefix]
#
# <rmm-source-root> holds RMM's tests/ and benchmarks/utilities/ (e.g. `git archive v25.02.00
# tests benchmarks` of rapidsai/rmm); prefix defaults to .carry/prefix.
# Left out: arena_mr_tests.cpp (it tests RMM's private arena classes, rmm::mr::detail::arena).
set -uo pipefail
cd "$(dirname "$0")/.."
src="$(cd "${1:?rmm source root}" && pwd)"
prefix="$(cd "${2:-.carry/prefix}" && pwd)"
cuda_root="$(dirname "$(dirname "$(command -v nvcc)")")"
out=/tmp/rmm-own-tests-logs
mkdir -p "$out"
work=/tmp/rmm-own-build
rm -rf "$work" && mkdir -p "$work"

# target name -> sources (RMM's tests/CMakeLists.txt, v25.02.00)
targets=(
  "DEVICE_MR_REF_TEST mr/device/mr_ref_tests.cpp mr/device/mr_ref_multithreaded_tests.cpp"
  "ADAPTOR_TEST mr/device/adaptor_tests.cpp"
  "POOL_MR_TEST mr/device/pool_mr_tests.cpp"
  "CUDA_ASYNC_MR_TEST mr/device/cuda_async_mr_tests.cpp"
  "CUDA_ASYNC_VIEW_MR_TEST mr/device/cuda_async_view_mr_tests.cpp"
  "THRUST_ALLOCATOR_TEST mr/device/thrust_allocator_tests.cu"
  "POLYMORPHIC_ALLOCATOR_TEST mr/device/polymorphic_allocator_tests.cpp"
  "STREAM_ADAPTOR_TEST mr/device/stream_allocator_adaptor_tests.cpp"
  "STATISTICS_TEST mr/device/statistics_mr_tests.cpp"
  "TRACKING_TEST mr/device/tracking_mr_tests.cpp"
  "FAILURE_CALLBACK_TEST mr/device/failure_callback_mr_tests.cpp"
  "PREFETCH_ADAPTOR_TEST mr/device/prefetch_resource_adaptor_tests.cpp"
  "ALIGNED_TEST mr/device/aligned_mr_tests.cpp"
  "LIMITING_TEST mr/device/limiting_mr_tests.cpp"
  "HOST_MR_REF_TEST mr/host/mr_ref_tests.cpp"
  "PINNED_POOL_MR_TEST mr/host/pinned_pool_mr_tests.cpp"
  "CUDA_STREAM_TEST cuda_stream_tests.cpp cuda_stream_pool_tests.cpp"
  "DEVICE_BUFFER_TEST device_buffer_tests.cu"
  "DEVICE_SCALAR_TEST device_scalar_tests.cpp"
  "DEVICE_UVECTOR_TEST device_uvector_tests.cpp"
  "PREFETCH_TEST prefetch_tests.cpp"
  "LOGGER_TEST logger_tests.cpp"
  "BINNING_MR_TEST mr/device/binning_mr_tests.cpp"
  "CALLBACK_MR_TEST mr/device/callback_mr_tests.cpp"
  "SYSTEM_MR_TEST mr/device/system_mr_tests.cu"
  "CONTAINER_MULTIDEVICE_TEST container_multidevice_tests.cu"
)

{
  echo 'cmake_minimum_required(VERSION 3.18)'
  echo 'project(rmm_own_tests LANGUAGES CXX CUDA)'
  echo 'find_package(rmm REQUIRED)'
  echo 'find_package(GTest REQUIRED)'
  echo 'find_package(Threads REQUIRED)'
  echo 'set(CMAKE_CUDA_ARCHITECTURES native)'
  for t in "${targets[@]}"; do
    read -r name files <<<"$t"
    srcs=""
    for f in $files; do srcs+=" \"$src/tests/$f\""; done
    echo "add_executable($name $srcs)"
    echo "target_include_directories($name PRIVATE \"$src\" \"$src/tests\")"
    echo "target_link_libraries($name PRIVATE rmm::rmm GTest::gmock GTest::gtest GTest::gmock_main Threads::Threads)"
    echo "set_target_properties($name PROPERTIES CXX_STANDARD 17 CUDA_STANDARD 17)"
    echo "target_compile_options($name PRIVATE \$<\$<COMPILE_LANGUAGE:CUDA>:--expt-extended-lambda --expt-relaxed-constexpr>)"
  done
} >"$work/CMakeLists.txt"

cmake -S "$work" -B "$work/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_COMPILER="$(command -v nvcc)" -DCUDAToolkit_ROOT="$cuda_root" >"$out/configure.log" 2>&1 ||
  { tail -30 "$out/configure.log"; exit 1; }
cmake --build "$work/build" --parallel "$(nproc)" -- -k >"$out/build.log" 2>&1
passed=0 failed=0 built=0
for t in "${targets[@]}"; do
  read -r name _ <<<"$t"
  exe="$work/build/$name"
  if [[ ! -x "$exe" ]]; then
    echo "$name: DID NOT BUILD ($(grep -c "error" <(grep -A0 "$name" "$out/build.log")) error lines)"
    continue
  fi
  built=$((built + 1))
  RMM_RUNTIME=cuda timeout 300 "$exe" >"$out/$name.log" 2>&1
  rc=$?
  p=$(grep -c '^\[       OK \]' "$out/$name.log")
  f=$(grep -c '^\[  FAILED  \] [A-Za-z].*(' "$out/$name.log")
  passed=$((passed + p)); failed=$((failed + f))
  echo "$name: rc=$rc passed=$p failed=$f"
  grep '^\[  FAILED  \] [A-Za-z].*(' "$out/$name.log" | head -5
done
grep -E "error" "$out/build.log" | sort | uniq | head -40
echo "rmm-own-tests: ${#targets[@]} targets, $built built"
tar -czf "${OUT:-/tmp}/rmm-own-tests.tar.gz" -C "$out" . 2>/dev/null
echo "rmm-own-tests: $passed passed, $failed failed"
