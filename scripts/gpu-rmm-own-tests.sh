#!/usr/bin/env bash
# Drop-in check on the GPU machine: builds one RMM release's own C++ test suite (which this
# repository does not contain) against rmm-rs's installed prefix, unchanged, one executable per
# RMM test target, and runs each with RMM_RUNTIME=cuda. Prints one line per target and a
# closing line "rmm-own-tests: N passed, N failed" (counts of gtest cases).
#
#   scripts/gpu-rmm-own-tests.sh <rmm-source-root> [api-version] [prefix] [cccl-include-dir]
#
# <rmm-source-root>  a checkout or `git archive` of rapidsai/rmm at the release's tag: 25.02
#                    keeps its tests in tests/ (and benchmarks/utilities/), 25.10 in cpp/tests/
#                    (and cpp/benchmarks/); either the repository root or its cpp/ folder
# [api-version]      2502 (default), 2510, 2606 or 2608: the release whose target list, C++ standard
#                    and RMM_API_VERSION the suite is built with (find_package(rmm YY.MM));
#                    26.06 keeps its tests in cpp/tests/ like 25.10 and builds them as C++20
# [prefix]           rmm-rs's install prefix (default .carry/prefix)
# [cccl-include-dir] CCCL headers to put first on the include path (RMM 25.10 pins CCCL 3.0.3,
#                    RMM 26.06 CCCL 3.4.0, which its API needs at least; CUDA 13's own CCCL is
#                    $CUDA/include/cccl, which rmm::rmm adds anyway)
# The older form `<rmm-source-root> <prefix>` still means API 2502.
#
# Without nvcc (a machine with no CUDA toolkit) the script only compiles the suite's .cpp
# programs as object libraries (the .cu ones need nvcc) against the CUDA runtime headers in
# $RMM_OWN_TESTS_CUDA_INCLUDE (gmock's headers from $RMM_OWN_TESTS_GMOCK_INCLUDE, default
# /usr/src/googletest/googlemock/include), and runs nothing: the check that the sources compile.
# Left out: arena_mr_tests.cpp (it tests RMM's private arena classes, rmm::mr::detail::arena).
set -uo pipefail
cd "$(dirname "$0")/.."
src="$(cd "${1:?rmm source root}" && pwd)"
api=2502
if [[ "${2:-}" =~ ^[0-9]{4}$ ]]; then
  api="$2"
  shift 2
else
  shift 1
fi
prefix="$(cd "${1:-.carry/prefix}" && pwd)"
cccl="${2:-}"
if [[ -n "$cccl" ]]; then
  cccl="$(cd "$cccl" && pwd)"
  [[ -e "$cccl/cuda/memory_resource" ]] || { echo "no cuda/memory_resource under $cccl" >&2; exit 2; }
fi
# One folder per release, so that suites of two releases may be built side by side.
out="${RMM_OWN_TESTS_LOGS:-/tmp/rmm-own-tests-logs-$api}"
mkdir -p "$out"
work="${RMM_OWN_TESTS_WORK:-/tmp/rmm-own-build-$api}"
rm -rf "$work" && mkdir -p "$work"

compile_only=0
if ! command -v nvcc >/dev/null; then
  compile_only=1
  cuda_include="${RMM_OWN_TESTS_CUDA_INCLUDE:?no nvcc: set RMM_OWN_TESTS_CUDA_INCLUDE to CUDA runtime headers for a compile-only check}"
  # gmock's headers without its library (Debian's googletest source package has them).
  gmock_include="${RMM_OWN_TESTS_GMOCK_INCLUDE:-/usr/src/googletest/googlemock/include}"
  [[ -e "$gmock_include/gmock/gmock.h" ]] || gmock_include=""
fi

# Per release: where the tests are, the C++ standard, and the targets (name -> sources,
# relative to the tests folder; a leading "@static" / "@driver" marks RMM's CUDART STATIC and
# LINK_DRIVER targets, "@plain" a program without googletest that passes by exiting with 0).
case "$api" in
  2502)
    root="$src"
    [[ -d "$root/tests" ]] || { echo "no tests/ under $src (RMM 25.02 layout)" >&2; exit 2; }
    std=17
    # RMM's tests/CMakeLists.txt, v25.02.00
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
    ;;
  2510)
    root="$src"
    [[ -d "$root/cpp/tests" ]] && root="$root/cpp"
    [[ -d "$root/tests" ]] || { echo "no cpp/tests/ under $src (RMM 25.10 layout)" >&2; exit 2; }
    std=17
    # RMM's cpp/tests/CMakeLists.txt, v25.10.00 (its _PTDS_ twins are the same sources built
    # with CUDA_API_PER_THREAD_DEFAULT_STREAM; left out here as in the 25.02 list)
    targets=(
      "DEVICE_MR_REF_TEST mr/device/mr_ref_tests.cpp mr/device/mr_ref_multithreaded_tests.cpp"
      "ADAPTOR_TEST mr/device/adaptor_tests.cpp"
      "POOL_MR_TEST mr/device/pool_mr_tests.cpp"
      "HWDECOMPRESS_TEST @driver mr/device/hwdecompress_tests.cpp"
      "CUDA_ASYNC_MR_STATIC_CUDART_TEST @static mr/device/cuda_async_mr_tests.cpp"
      "CUDA_ASYNC_MR_SHARED_CUDART_TEST mr/device/cuda_async_mr_tests.cpp"
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
      "PINNED_MR_TEST mr/host/pinned_mr_tests.cpp"
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
      "ERROR_MACROS_TEST error_macros_tests.cpp"
    )
    ;;
  2606 | 2608)
    root="$src"
    [[ -d "$root/cpp/tests" ]] && root="$root/cpp"
    [[ -d "$root/tests" ]] || { echo "no cpp/tests/ under $src (RMM 26.06 layout)" >&2; exit 2; }
    std=20
    # RMM's cpp/tests/CMakeLists.txt, v26.06.00, and the same list at main (26.08 development,
    # 5d50a37b), without the _PTDS_ twins, as above
    targets=(
      "CUDA_MR_REF_TEST mr/mr_ref_cuda_tests.cpp"
      "CUDA_ASYNC_MR_REF_TEST mr/mr_ref_cuda_async_tests.cpp"
      "MANAGED_MR_REF_TEST mr/mr_ref_managed_tests.cpp"
      "ARENA_MR_REF_TEST mr/mr_ref_arena_tests.cpp"
      "BINNING_MR_REF_TEST mr/mr_ref_binning_tests.cpp"
      "SYSTEM_MR_REF_TEST mr/mr_ref_system_tests.cpp"
      "PINNED_MR_REF_TEST mr/mr_ref_pinned_tests.cpp"
      "LOGGING_MR_REF_TEST mr/mr_ref_logging_tests.cpp"
      "FIXED_SIZE_MR_REF_TEST mr/mr_ref_fixed_size_tests.cpp"
      "DEFAULT_MR_REF_TEST mr/mr_ref_default_tests.cpp"
      "ADAPTOR_TEST mr/adaptor_tests.cpp"
      "CCCL_ADAPTOR_TEST mr/cccl_adaptor_tests.cpp"
      "THREAD_SAFE_MR_REF_TEST mr/mr_ref_thread_safe_tests.cpp"
      "POOL_MR_TEST mr/pool_mr_tests.cpp"
      "POOL_MR_REF_TEST mr/mr_ref_pool_tests.cpp"
      "PINNED_POOL_MR_REF_TEST mr/mr_ref_pinned_pool_tests.cpp"
      "HWDECOMPRESS_TEST @driver mr/hwdecompress_tests.cpp"
      "CUDA_ASYNC_MR_STATIC_CUDART_TEST @static mr/cuda_async_mr_tests.cpp"
      "CUDA_ASYNC_MR_SHARED_CUDART_TEST mr/cuda_async_mr_tests.cpp"
      "CUDA_ASYNC_MANAGED_MR_TEST mr/cuda_async_managed_mr_tests.cpp"
      "THRUST_ALLOCATOR_TEST mr/thrust_allocator_tests.cu"
      "POLYMORPHIC_ALLOCATOR_TEST mr/polymorphic_allocator_tests.cpp"
      "STREAM_ADAPTOR_TEST mr/stream_allocator_adaptor_tests.cpp"
      "STATISTICS_TEST mr/statistics_mr_tests.cpp"
      "STATISTICS_MR_REF_TEST mr/mr_ref_statistics_tests.cpp"
      "TRACKING_TEST mr/tracking_mr_tests.cpp"
      "TRACKING_MR_REF_TEST mr/mr_ref_tracking_tests.cpp"
      "FAILURE_CALLBACK_TEST mr/failure_callback_mr_tests.cpp"
      "FAILURE_CALLBACK_MR_REF_TEST mr/mr_ref_failure_callback_tests.cpp"
      "PREFETCH_ADAPTOR_TEST mr/prefetch_resource_adaptor_tests.cpp"
      "PREFETCH_MR_REF_TEST mr/mr_ref_prefetch_tests.cpp"
      "ALIGNED_TEST mr/aligned_mr_tests.cpp"
      "ALIGNED_MR_REF_TEST mr/mr_ref_aligned_tests.cpp"
      "LIMITING_TEST mr/limiting_mr_tests.cpp"
      "LIMITING_MR_REF_TEST mr/mr_ref_limiting_tests.cpp"
      "HOST_MR_REF_TEST mr/host_mr_ref_tests.cpp"
      "PINNED_HOST_POOL_MR_TEST mr/pinned_host_pool_mr_tests.cpp"
      "CUDA_STREAM_TEST cuda_stream_tests.cpp cuda_stream_pool_tests.cpp"
      "DEVICE_BUFFER_TEST device_buffer_tests.cu"
      "DEVICE_SCALAR_TEST device_scalar_tests.cpp"
      "DEVICE_UVECTOR_TEST device_uvector_tests.cpp"
      "PREFETCH_TEST prefetch_tests.cpp"
      "LOGGER_TEST logger_tests.cpp"
      "BINNING_MR_TEST mr/binning_mr_tests.cpp"
      "CALLBACK_MR_TEST mr/callback_mr_tests.cpp"
      "CALLBACK_MR_REF_TEST mr/mr_ref_callback_tests.cpp"
      "SYSTEM_MR_TEST mr/system_mr_tests.cu"
      "CONTAINER_MULTIDEVICE_TEST container_multidevice_tests.cu"
      "ERROR_MACROS_TEST error_macros_tests.cpp"
      "PROCESS_IS_EXITING_TEST process_is_exiting_tests.cpp"
      "PROCESS_IS_EXITING_SHUTDOWN_TEST @plain process_is_exiting_shutdown_test.cpp"
      "RESOURCE_REF_CONVERSION_TEST mr/resource_ref_conversion_tests.cpp"
    )
    ;;
  *)
    echo "api-version must be 2502, 2510, 2606 or 2608, not '$api'" >&2
    exit 2
    ;;
esac
tests="$root/tests"
version="${api:0:2}.${api:2:2}"

{
  echo 'cmake_minimum_required(VERSION 3.18)'
  if ((compile_only)); then
    echo 'project(rmm_own_tests LANGUAGES CXX)'
    echo 'set(RMM_NO_GPU_RUNTIME_INTERFACE ON)'
  else
    echo 'project(rmm_own_tests LANGUAGES CXX CUDA)'
    echo 'find_package(CUDAToolkit REQUIRED)'
    echo 'set(CMAKE_CUDA_ARCHITECTURES native)'
  fi
  echo "find_package(rmm $version REQUIRED)"
  echo 'find_package(GTest REQUIRED)'
  echo 'find_package(Threads REQUIRED)'
  for t in "${targets[@]}"; do
    read -r name files <<<"$t"
    kind=""
    case "$files" in @static*|@driver*|@plain*) kind="${files%% *}"; files="${files#* }" ;; esac
    srcs=""
    for f in $files; do
      if ((compile_only)) && [[ "$f" == *.cu ]]; then srcs=""; break; fi
      srcs+=" \"$tests/$f\""
    done
    [[ -z "$srcs" ]] && continue
    if ((compile_only)); then
      echo "add_library($name OBJECT $srcs)"
      echo "target_include_directories($name SYSTEM PRIVATE \"$cuda_include\")"
      echo "target_link_libraries($name PRIVATE rmm::rmm GTest::gtest)"
      [[ -n "$gmock_include" ]] && echo "target_include_directories($name SYSTEM PRIVATE \"$gmock_include\")"
    elif [[ "$kind" == "@static" ]]; then
      # RMM links this one against the static CUDA runtime and uses rmm's headers only.
      echo "add_executable($name $srcs)"
      echo "target_include_directories($name PRIVATE \"\${rmm_INCLUDE_DIR}\")"
      echo "target_compile_definitions($name PRIVATE RMM_API_VERSION=$api LIBCUDACXX_ENABLE_EXPERIMENTAL_MEMORY_RESOURCE)"
      echo "foreach(dir IN LISTS CUDAToolkit_INCLUDE_DIRS)"
      echo "  if(EXISTS \"\${dir}/cccl/cuda/memory_resource\")"
      echo "    target_include_directories($name SYSTEM PRIVATE \"\${dir}/cccl\")"
      echo "  endif()"
      echo "endforeach()"
      echo "target_link_libraries($name PRIVATE \"\${rmm_LIBRARY}\" CUDA::cudart_static GTest::gmock GTest::gtest GTest::gmock_main Threads::Threads)"
    elif [[ "$kind" == "@plain" ]]; then
      echo "add_executable($name $srcs)"
      echo "target_link_libraries($name PRIVATE rmm::rmm Threads::Threads)"
    else
      echo "add_executable($name $srcs)"
      echo "target_link_libraries($name PRIVATE rmm::rmm GTest::gmock GTest::gtest GTest::gmock_main Threads::Threads)"
      [[ "$kind" == "@driver" ]] && echo "target_link_libraries($name PRIVATE CUDA::cuda_driver)"
    fi
    echo "target_include_directories($name PRIVATE \"$root\" \"$tests\")"
    [[ -n "$cccl" ]] && echo "target_include_directories($name SYSTEM BEFORE PRIVATE \"$cccl\")"
    if [[ "$api" != 2502 ]]; then
      echo "target_compile_definitions($name PRIVATE RMM_LOG_ACTIVE_LEVEL=RAPIDS_LOGGER_LOG_LEVEL_INFO)"
    fi
    echo "set_target_properties($name PROPERTIES CXX_STANDARD $std CXX_STANDARD_REQUIRED ON CUDA_STANDARD $std)"
    echo "target_compile_options($name PRIVATE \$<\$<COMPILE_LANGUAGE:CXX>:-Wall -Werror> \$<\$<COMPILE_LANGUAGE:CUDA>:--expt-extended-lambda --expt-relaxed-constexpr>)"
  done
} >"$work/CMakeLists.txt"

cmake_args=(-S "$work" -B "$work/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release)
if ((!compile_only)); then
  cuda_root="$(dirname "$(dirname "$(command -v nvcc)")")"
  cmake_args+=(-DCMAKE_CUDA_COMPILER="$(command -v nvcc)" -DCUDAToolkit_ROOT="$cuda_root")
fi
cmake "${cmake_args[@]}" >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build "$work/build" --parallel "$(nproc)" -- -k >"$out/build.log" 2>&1
passed=0 failed=0 built=0 listed=0
for t in "${targets[@]}"; do
  read -r name files <<<"$t"
  if ((compile_only)); then
    [[ "$files" == *.cu* ]] && continue
    listed=$((listed + 1))
    if grep -q "Built target $name\$" "$out/build.log"; then
      built=$((built + 1))
      echo "$name: compiled"
    else
      echo "$name: DID NOT COMPILE"
    fi
    continue
  fi
  listed=$((listed + 1))
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
  if [[ "$files" == @plain* ]]; then
    # No googletest: the exit status is the result.
    if ((rc == 0)); then p=1 f=0; else p=0 f=1; fi
  fi
  passed=$((passed + p)); failed=$((failed + f))
  echo "$name: rc=$rc passed=$p failed=$f"
  grep '^\[  FAILED  \] [A-Za-z].*(' "$out/$name.log" | head -5
done
grep -E "error" "$out/build.log" | sort | uniq | head -40
echo "rmm-own-tests: RMM $version, $listed targets, $built built"
tar -czf "${OUT:-/tmp}/rmm-own-tests.tar.gz" -C "$out" . 2>/dev/null
if ((compile_only)); then
  echo "rmm-own-tests: compile only (no nvcc): $built of $listed .cpp targets compiled"
  [[ "$built" == "$listed" ]]
else
  echo "rmm-own-tests: $passed passed, $failed failed"
fi
