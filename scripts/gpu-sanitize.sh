#!/usr/bin/env bash
# Runs the C++ suites (tests/cpp), the C examples (examples/c) and tests/gpu/kernel_test.cu
# under compute-sanitizer on the GPU machine (RMM_RUNTIME=cuda): memcheck with
# --leak-check full, racecheck, synccheck and initcheck.
#
# The GPU machine has no Rust toolchain: build the carried files here first with
# scripts/make-carry.sh (.carry/lib/librmm.so and the installed prefix .carry/prefix), as for
# scripts/gpu-cpp-tests.sh.
#
# Reports are sorted into
#   deliberate  cudaErrorMemoryAllocation from tests that ask for absurd sizes on purpose
#               (out-of-memory tests), and cudaErrorInvalidValue from prefetching memory that
#               is not managed (RMM's prefetch ignores it too): the expected answers
#   leaks       memcheck's "Leaked N bytes" records
#   errors      every other report (memory access errors, races, sync errors, uninitialized
#               reads, other runtime API errors), and runs that failed or crashed
#   unwritten   initcheck's reads of never-written memory by a cudaMemcpy (tests copy fresh
#               buffers, which RMM's containers allow)
# and the script ends with one line:
#   gpu-sanitize: N runs, E errors, L leaks, D deliberate, U unwritten copies, G runs without
#   GPU calls (F runs failed)
# Exit status: 0 when E and L are 0, else 1 (2: could not start).
#
# Options (environment): TOOLS="memcheck racecheck synccheck initcheck" to choose tools,
# ONLY=regex to run only the binaries whose name matches, LOGS=dir to keep the logs
# (default /tmp/gpu-sanitize), RUN_TIMEOUT=seconds per run (default 1200).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
root="$PWD"
prefix="$root/.carry/prefix"
logs="${LOGS:-/tmp/gpu-sanitize}"
tools="${TOOLS:-memcheck racecheck synccheck initcheck}"
only="${ONLY:-.}"
run_timeout="${RUN_TIMEOUT:-1200}"
export RMM_RUNTIME=cuda

die() {
  echo "gpu-sanitize: $*" >&2
  exit 2
}

for dir in /usr/local/cuda/bin /usr/local/cuda-*/bin; do
  [[ -d "$dir" ]] && PATH="$PATH:$dir"
done
export PATH
sanitizer="$(command -v compute-sanitizer)" || die "compute-sanitizer not found (PATH, /usr/local/cuda/bin)"
nvcc_bin="$(command -v nvcc)" || die "nvcc not found"
[[ -d "$prefix" ]] || die "no carried prefix at $prefix: run scripts/make-carry.sh on the build machine"
lib_dir="$(dirname "$(find "$prefix" -name 'librmm.so' -print -quit)")"
[[ -n "$lib_dir" && -e "$lib_dir/librmm.so" ]] || die "librmm.so is missing under $prefix"
cuda_inc="$(dirname "$nvcc_bin")/../include"
build="${BUILD:-/tmp/gpu-sanitize-build}"
rm -rf "$logs"
mkdir -p "$logs" "$build" || die "cannot create $logs / $build"

# ---- build ----
binaries=()
for project in tests/cpp examples/c; do
  echo "== build $project"
  name="${project//\//-}" # log files are named after the project, flat in $logs
  if ! cmake -S "$project" -B "$build/$project" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_CXX_FLAGS="-isystem $cuda_inc" -DCMAKE_CUDA_COMPILER="$nvcc_bin" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$logs/configure-$name.log" 2>&1; then
    tail -20 "$logs/configure-$name.log"
    die "cmake configure of $project failed"
  fi
  # A target that fails to build (another engineer's work in progress) is reported, not fatal.
  cmake --build "$build/$project" --parallel "$(nproc)" -- -k >"$logs/build-$name.log" 2>&1 ||
    echo "   some targets of $project failed to build (see $logs/build-$name.log)"
  while IFS= read -r exe; do
    binaries+=("$exe")
  done < <(find "$build/$project" -maxdepth 1 -type f -perm -u+x -name 'rmm_*' | sort)
done
echo "== build tests/gpu/kernel_test.cu"
if "$nvcc_bin" -O2 -g -lineinfo -std=c++17 -I"$prefix/include" tests/gpu/kernel_test.cu \
  -L"$lib_dir" -lrmm -Xlinker -rpath -Xlinker "$lib_dir" -o "$build/kernel_test" \
  >"$logs/build-kernel_test.log" 2>&1; then
  binaries+=("$build/kernel_test")
else
  echo "   kernel_test failed to build (see $logs/build-kernel_test.log)"
fi
((${#binaries[@]} > 0)) || die "nothing was built"

# ---- run ----
runs=0 errors=0 leaks=0 deliberate=0 failed=0 unwritten=0 no_gpu=0
declare -a problems=()

# Counts the reports of one log. Top-level records start with "========= " followed by a
# non-blank; backtrace lines are indented further.
classify() {
  local log="$1" tool="$2" name="$3"
  local d e l r
  local u
  # Deliberate: out-of-memory answers to absurd sizes, and prefetches of memory that is not
  # managed (cudaMemPrefetchAsync answers cudaErrorInvalidValue; RMM's prefetch ignores it
  # too), and device attributes asked with a bad device or attribute number (tests of
  # rmm_device_get_attribute's errors), each with the cudaGetLastError that clears it.
  d="$(grep -cE '^========= Program hit (cudaErrorMemoryAllocation|cudaErrorInvalidValue .* cudaMemPrefetchAsync|cudaErrorInvalid(Value|Device) .* cudaDeviceGetAttribute)' "$log")"
  l="$(grep -cE '^========= Leaked [0-9]+ bytes' "$log")"
  # initcheck: a cudaMemcpy whose source was never written (tests copy fresh buffers, which
  # RMM's containers allow): counted apart, as "unwritten copies".
  u="$(grep -cE '^=========     Uninitialized access .* on access by cudaMemcpy source' "$log")"
  e="$(grep -E '^========= [^ ]' "$log" |
    grep -vE 'COMPUTE-SANITIZER|ERROR SUMMARY|LEAK SUMMARY|RACECHECK SUMMARY|Program hit cudaErrorMemoryAllocation|Program hit cudaErrorInvalid(Value|Device) .* (cudaMemPrefetchAsync|cudaDeviceGetAttribute|cudaGetLastError)|Leaked [0-9]+ bytes|Target application returned|Target application terminated before first instrumented API call|This can take a while|Saved host backtrace|Host Frame|Device Frame|Error: process didn|No CUDA-capable|^========= *$' |
    grep -cE 'Invalid|Race|[Hh]azard|Uninitialized|Barrier|Misaligned|Out-of-range|Program hit|Malloc|Free|Illegal|Unspecified|[Ee]rror')"
  e=$((e > u ? e - u : 0))
  unwritten=$((unwritten + u))
  # racecheck prints its hazards as a summary line too; take the larger count.
  r="$(sed -nE 's/.*RACECHECK SUMMARY: [0-9]+ hazards? displayed \(([0-9]+) errors?.*/\1/p' "$log" | tail -1)"
  if [[ -n "$r" ]] && ((r > e)); then e=$r; fi
  deliberate=$((deliberate + d))
  leaks=$((leaks + l))
  errors=$((errors + e))
  if ((e > 0 || l > 0)); then
    problems+=("$tool $name: $e error(s), $l leak(s) -> $log")
  fi
}

for exe in "${binaries[@]}"; do
  name="$(basename "$exe")"
  [[ "$name" =~ $only ]] || continue
  for tool in $tools; do
    args=(--tool "$tool" --error-exitcode 97 --print-limit 200)
    case "$tool" in
    memcheck) args+=(--leak-check full --report-api-errors all) ;;
    racecheck) args+=(--racecheck-report all) ;;
    synccheck | initcheck) ;;
    *) die "unknown tool $tool (memcheck racecheck synccheck initcheck)" ;;
    esac
    log="$logs/$tool-$name.log"
    # The fidelity tests that depend on timing or on when a mempool releases memory are
    # checked without a sanitizer (scripts/gpu-cpp-tests.sh): the tools serialize work and
    # hold freed memory, so these would fail for the tools' sake (seen with initcheck).
    filter='*'
    if [[ "$name" == rmm_runtime_fidelity_tests ]]; then
      filter='-fidelity.EventsAndStreamWaitEvent:fidelity.StreamOrderedPoolReleasesAtSynchronize'
      filter+=':fidelity.NonBlockingStreamsIgnoreTheLegacyStream:fidelity.PerThreadDefaultStreamSemantics'
    fi
    runs=$((runs + 1))
    start=$SECONDS
    GTEST_FILTER="$filter" timeout "$run_timeout" "$sanitizer" "${args[@]}" --log-file "$log" \
      "$exe" >"$log.stdout" 2>&1
    rc=$?
    classify "$log" "$tool" "$name"
    # A test binary that makes no CUDA call at all (host-only helpers) ends with the tool's
    # status 255 and "terminated before first instrumented API call": fine when its tests
    # passed.
    if ((rc == 255)) && grep -q 'terminated before first instrumented API call' "$log" &&
      grep -q '^\[  PASSED  \]' "$log.stdout" && ! grep -q '^\[  FAILED  \]' "$log.stdout"; then
      rc=0
      no_gpu=$((no_gpu + 1))
    fi
    # 97: the sanitizer found something (counted above); other non-zero: the run itself failed.
    if ((rc != 0 && rc != 97)); then
      failed=$((failed + 1))
      errors=$((errors + 1))
      problems+=("$tool $name: run failed with status $rc -> $log.stdout")
    fi
    printf '   %-10s %-40s rc=%-3s %4ss\n' "$tool" "$name" "$rc" "$((SECONDS - start))"
  done
done

if ((${#problems[@]} > 0)); then
  echo "== reports"
  printf '   %s\n' "${problems[@]}"
fi
echo "gpu-sanitize: $runs runs, $errors errors, $leaks leaks, $deliberate deliberate, $unwritten unwritten copies, $no_gpu runs without GPU calls ($failed runs failed)"
((errors == 0 && leaks == 0))
