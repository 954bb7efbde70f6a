#!/usr/bin/env bash
# Runs the C ABI fuzzer (tests/fuzz/fuzz_c_abi.cpp) on the GPU machine with RMM_RUNTIME=cuda:
# every resource kind the fuzzer has (those the device refuses as unsupported are listed in
# each run's log), several seeds, 8 and 16 threads, in two builds against the carried prefix:
#   asan  -fsanitize=address,undefined (ASAN_OPTIONS protect_shadow_gap=0, which CUDA needs)
#   fast  -O3 without sanitizers: the operation count
#
# The GPU machine has no Rust toolchain: build the carried files here first with
# scripts/make-carry.sh (the installed prefix .carry/prefix), as for scripts/gpu-cpp-tests.sh.
# Needs cmake and g++ there; nvcc is not used (the fuzzer is host code calling <rmm/rmm.h>).
#
# Prints one line per run (build, seed, threads, operations, bad calls, refused, defects,
# operations per second, exit status) and a total line:
#   gpu-fuzz: N runs, OPS operations, B bad calls, D defects (F runs failed)
# Exit status: 0 when every run ended with 0 defects and status 0, else 1 (2: could not start).
# The defaults (6 sanitized runs of 15 s, 6 fast runs of 60 s, and the two builds) fit in one
# 10-minute command; for more operations run it again with other SEEDS and BUILDS=fast, or
# raise FAST_SECONDS / set FAST_OPS where a command may run longer.
#
# Options (environment):
#   SEEDS="1 2 3"        seeds (each run uses one seed and one thread count)
#   THREADS="8 16"       thread counts
#   BUILDS="asan fast"   which builds run (each is built only when it runs)
#   FAST_SECONDS=360     wall time of all fast runs together, split evenly between them
#   FAST_OPS=0           operations of all fast runs together (0: no budget; with one, a run
#                        stops at its share or its time, whichever comes first)
#   ASAN_SECONDS=90      wall time of all sanitized runs together
#   ASAN_OPS=0           operations of all sanitized runs together (0: no budget)
#   KINDS=               the fuzzer's --kinds (comma-separated; empty: every kind)
#   CHECK_BATCH=16       the fuzzer's --check-batch (0: check each range before its free)
#   VMM_RESERVE_MIB=1024 the fuzzer's --vmm-reserve-mib (each thread's vmm pools)
#   ASAN_LEAKS=1         LeakSanitizer on in the sanitized runs (CUDA's libraries suppressed)
#   PREFIX=.carry/prefix the installed prefix; BUILD=/tmp/gpu-fuzz-build; LOGS=/tmp/gpu-fuzz
#   RUNTIME=cuda         RMM_RUNTIME of the runs (host: try the script on a machine without GPU)
#   PARALLEL=1           runs side by side (separate processes), each given its share of
#                        the wall time times this; on an H200 six processes together made
#                        fewer operations than one (the GPU time-slices between processes)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
root="$PWD"
prefix="${PREFIX:-$root/.carry/prefix}"
build="${BUILD:-/tmp/gpu-fuzz-build}"
logs="${LOGS:-/tmp/gpu-fuzz}"
seeds="${SEEDS:-1 2 3}"
thread_counts="${THREADS:-8 16}"
builds="${BUILDS:-asan fast}"
fast_seconds="${FAST_SECONDS:-360}"
fast_ops="${FAST_OPS:-0}"
asan_seconds="${ASAN_SECONDS:-90}"
asan_ops="${ASAN_OPS:-0}"
kinds="${KINDS:-}"
check_batch="${CHECK_BATCH:-16}"
vmm_reserve="${VMM_RESERVE_MIB:-1024}"
asan_leaks="${ASAN_LEAKS:-1}"
runtime="${RUNTIME:-cuda}"
parallel="${PARALLEL:-1}"
export RMM_RUNTIME="$runtime"

die() {
  echo "gpu-fuzz: $*" >&2
  exit 2
}

for dir in /usr/local/cuda/bin /usr/local/cuda-*/bin; do
  [[ -d "$dir" ]] && PATH="$PATH:$dir"
done
export PATH
command -v cmake >/dev/null || die "cmake not found"
command -v g++ >/dev/null || die "g++ not found"
[[ -d "$prefix" ]] || die "no carried prefix at $prefix: run scripts/make-carry.sh on the build machine"
[[ -e "$prefix/include/rmm/rmm.h" ]] || die "$prefix/include/rmm/rmm.h is missing"
grep -q rmm_vmm_pool_create "$prefix/include/rmm/rmm.h" ||
  die "$prefix is older than the fuzzer (no rmm_vmm_pool_create): run scripts/make-carry.sh again"
rm -rf "$logs"
mkdir -p "$logs" "$build" || die "cannot create $logs / $build"

# The sanitized build: as scripts/test.sh's sanitizer step.
san_flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -fsanitize-recover=null -O1 -g1 -Wno-maybe-uninitialized"
san_link="-fsanitize=address,undefined"
# LeakSanitizer: the project's suppressions, and what CUDA's own libraries keep until exit.
lsan_supp="$build/lsan.supp"
{
  cat "$root/scripts/lsan.supp"
  printf '%s\n' "leak:libcuda.so" "leak:libcudart.so" "leak:libnvidia-"
} >"$lsan_supp"
asan_env=(
  "ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=$asan_leaks:allocator_may_return_null=1:abort_on_error=0:detect_stack_use_after_return=0"
  "LSAN_OPTIONS=suppressions=$lsan_supp:print_suppressions=0"
  "UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:suppressions=$root/scripts/ubsan.supp"
)

build_fuzzer() {
  local name="$1" log="$logs/build-$1.log"
  local -a flags
  if [[ "$name" == asan ]]; then
    flags=(-DCMAKE_BUILD_TYPE= "-DCMAKE_CXX_FLAGS=$san_flags" "-DCMAKE_EXE_LINKER_FLAGS=$san_link")
  else
    flags=(-DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS=-march=native")
  fi
  echo "== build $name"
  if ! cmake -S "$root/tests/fuzz" -B "$build/$name" -DCMAKE_PREFIX_PATH="$prefix" \
    --no-warn-unused-cli "${flags[@]}" >"$log" 2>&1 ||
    ! cmake --build "$build/$name" --parallel "$(nproc)" >>"$log" 2>&1; then
    tail -30 "$log"
    die "building the $name fuzzer failed (see $log)"
  fi
}

[[ "$parallel" =~ ^[1-9][0-9]*$ ]] || die "PARALLEL must be a whole number from 1 (got '$parallel')"
read -r -a seed_list <<<"$seeds"
read -r -a thread_list <<<"$thread_counts"
read -r -a build_list <<<"$builds"
((${#seed_list[@]} > 0 && ${#thread_list[@]} > 0 && ${#build_list[@]} > 0)) ||
  die "SEEDS, THREADS and BUILDS must not be empty"
per_build_runs=$((${#seed_list[@]} * ${#thread_list[@]}))
for b in "${build_list[@]}"; do
  [[ "$b" == asan || "$b" == fast ]] || die "unknown build $b (asan fast)"
  build_fuzzer "$b"
done

declare -a rcs=()
last_log="" runs=0 total_ops=0 total_bad=0 total_refused=0 total_defects=0 failed=0 total_seconds=0
declare -a problems=()
pattern='^==[0-9]+==WARNING: AddressSanitizer failed to allocate 0x[0-9a-f]+ bytes$'

printf '%-5s %6s %7s %13s %11s %9s %8s %11s %4s\n' build seed threads ops "bad calls" refused \
  defects "ops/s" rc
# Reads one finished run's log: prints its line and adds it to the totals.
collect() { # build seed threads log rc
  local b="$1" seed="$2" threads="$3" log="$4" rc="$5" line ops bad refused defects rate asan_refused
  last_log="$log"
  runs=$((runs + 1))
  line="$(grep -E '^rmm_fuzz_c_abi: [0-9]+ operations, [0-9]+ bad calls' "$log" | tail -n 1)"
  ops=0 bad=0 refused=0 defects=0 rate=0
  if [[ -n "$line" ]]; then
    read -r ops bad refused defects rate < <(sed -E \
      's/^rmm_fuzz_c_abi: ([0-9]+) operations, ([0-9]+) bad calls, ([0-9]+) refused \(limits\), ([0-9]+) defects \(([0-9.]+) ops\/s.*/\1 \2 \3 \4 \5/' \
      <<<"$line")
  fi
  printf '%-5s %6s %7s %13s %11s %9s %8s %11s %4s\n' "$b" "$seed" "$threads" "$ops" "$bad" \
    "$refused" "$defects" "$rate" "$rc"
  total_ops=$((total_ops + ops))
  total_bad=$((total_bad + bad))
  total_refused=$((total_refused + refused))
  total_defects=$((total_defects + defects))
  if [[ -z "$line" ]]; then
    failed=$((failed + 1))
    problems+=("$b seed $seed, $threads threads: no summary line (exit status $rc) -> $log")
  elif ! grep -q "^rmm_fuzz_c_abi: runtime $runtime " "$log"; then
    failed=$((failed + 1))
    problems+=("$b seed $seed, $threads threads: did not run on the $runtime runtime -> $log")
  elif ((rc != 0)); then
    failed=$((failed + 1))
    problems+=("$b seed $seed, $threads threads: exit status $rc, $defects defects -> $log")
  fi
  if ((defects > 0)); then
    # The first distinct defect messages (the thread and step numbers dropped).
    grep -E '^DEFECT ' "$log" | sed -E 's/^DEFECT thread [0-9]+ step [0-9]+: //' |
      sort | uniq -c | sort -rn | head -5 | sed 's/^/      /'
  fi
  if grep -qE '^(==[0-9]+==ERROR|SUMMARY: (AddressSanitizer|UndefinedBehaviorSanitizer|LeakSanitizer))|runtime error:' "$log"; then
    problems+=("$b seed $seed, $threads threads: sanitizer report -> $log")
    grep -E '^(==[0-9]+==ERROR|SUMMARY:)|runtime error:' "$log" | head -3 | sed 's/^/      /'
  fi
  asan_refused="$(grep -cE "$pattern" "$log" || true)"
  ((asan_refused > 0)) && echo "      ($asan_refused deliberate requests over 1 TiB refused by ASan)"
  return 0
}

for b in "${build_list[@]}"; do
  if [[ "$b" == asan ]]; then
    budget_s="$asan_seconds" budget_ops="$asan_ops"
  else
    budget_s="$fast_seconds" budget_ops="$fast_ops"
  fi
  # Runs side by side, in groups of $parallel: each run gets its share of the build's wall
  # time times the group size (at least 1 s).
  group=$((parallel < per_build_runs ? parallel : per_build_runs))
  run_s=$(awk -v t="$budget_s" -v n="$per_build_runs" -v g="$group" 'BEGIN { s = t * g / n; if (s < 1) s = 1; printf "%.1f", s }')
  run_ops=0
  if ((budget_ops > 0)); then run_ops=$(((budget_ops + per_build_runs - 1) / per_build_runs)); fi
  # A run that hangs is stopped well after its time is up.
  limit=$(awk -v s="$run_s" 'BEGIN { printf "%d", s * 2 + 300 }')
  specs=()
  for threads in "${thread_list[@]}"; do
    for seed in "${seed_list[@]}"; do specs+=("$seed:$threads"); done
  done
  for ((first = 0; first < ${#specs[@]}; first += group)); do
    start=$SECONDS
    pids=() batch=()
    for spec in "${specs[@]:first:group}"; do
      seed="${spec%%:*}" threads="${spec##*:}"
      log="$logs/$b-seed$seed-t$threads.log"
      args=(--seconds "$run_s" --seed "$seed" --threads "$threads" --check-batch "$check_batch"
        --vmm-reserve-mib "$vmm_reserve")
      ((run_ops > 0)) && args+=(--ops "$run_ops")
      [[ -n "$kinds" ]] && args+=(--kinds "$kinds")
      env_run=()
      [[ "$b" == asan ]] && env_run=("${asan_env[@]}")
      env "${env_run[@]}" timeout "$limit" "$build/$b/rmm_fuzz_c_abi" "${args[@]}" >"$log" 2>&1 &
      pids+=($!)
      batch+=("$seed $threads $log")
    done
    for k in "${!pids[@]}"; do
      wait "${pids[$k]}"
      rcs[k]=$?
    done
    total_seconds=$((total_seconds + SECONDS - start))
    for k in "${!batch[@]}"; do
      read -r seed threads log <<<"${batch[$k]}"
      collect "$b" "$seed" "$threads" "$log" "${rcs[$k]}"
    done
  done
done

# The kinds of the last run (with their counts), so the output shows what was covered.
if [[ -n "$last_log" ]]; then
  echo "== per kind, last run ($(basename "$last_log" .log))"
  sed -n '/^rmm_fuzz_c_abi: per kind/,/^rmm_fuzz_c_abi: [0-9]/p' "$last_log" | sed '1d;$d'
fi
if ((${#problems[@]} > 0)); then
  echo "== problems"
  printf '   %s\n' "${problems[@]}"
fi
rate=$(awk -v o="$total_ops" -v s="$total_seconds" 'BEGIN { if (s > 0) printf "%.0f", o / s; else print 0 }')
echo "gpu-fuzz: $runs runs, $total_ops operations, $total_bad bad calls, $total_refused refused (limits), $total_defects defects ($failed runs failed; $total_seconds s, $rate ops/s overall; logs in $logs)"
((total_defects == 0 && failed == 0 && ${#problems[@]} == 0))
