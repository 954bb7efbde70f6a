#!/usr/bin/env bash
# The whole test command (CI runs it through .ci/run): formatting, lints, header drift, Rust
# tests, the CMake build + install, ctest, consumers of the installed package, pkg-config,
# the C++ wrapper on HIP's headers (tests/hip) and the HIP "no device" path when Debian's HIP
# runtime and headers are present.
#
# Each step's output is also written to build/test-logs/<nn>-<step>.log; each step prints its
# wall time when it ends, and the command closes with a table of the steps' times and the
# counts of every suite (parsed from the steps' output).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
jobs="$(nproc 2>/dev/null || echo 2)"
export RMM_RUNTIME="${RMM_RUNTIME:-host}"

logs="$root/build/test-logs"
rm -rf "$logs"
mkdir -p "$logs"
# steps.tsv: index, name, seconds, ok|FAILED. counts.tsv: step index, suite, counts.
steps_file="$logs/steps.tsv"
counts_file="$logs/counts.tsv"
: >"$steps_file"
: >"$counts_file"
export RMM_TEST_STEP=0
command_start=$SECONDS

consumers="$root/build/consumers"
san="$root/build/sanitize"

# The sanitized builds (see the sanitizer step). Built against the installed package (so they
# are also its consumers), in their own build directory. The Rust library itself is not
# instrumented; ASan still checks what it reads and writes through the intercepted
# memcpy/memset, and LeakSanitizer sees its mallocs.
#   detect_leaks=1            LeakSanitizer on (scripts/lsan.supp: what is leaked by design)
#   allocator_may_return_null the tests ask for absurd sizes on purpose: malloc must fail
#                             with NULL (as glibc's does), not abort the process. ASan still
#                             prints "WARNING: AddressSanitizer failed to allocate 0x... bytes"
#                             for each request over its 1 TiB limit (no option silences it);
#                             the fuzzer's run filters and counts those lines
#   halt_on_error=1           UBSan stops at the first report (-fno-sanitize-recover too;
#                             the null check stays recoverable only so that
#                             scripts/ubsan.supp can name Thrust's own headers)
#   -Wno-maybe-uninitialized  GCC's flow analysis gives false positives in libstdc++ (<regex>)
#                             once ASan instruments it; the suites build with -Werror
san_flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -fsanitize-recover=null -O1 -g1 -Wno-maybe-uninitialized"
san_link="-fsanitize=address,undefined"
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:abort_on_error=0:detect_stack_use_after_return=0"
export LSAN_OPTIONS="suppressions=$root/scripts/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=$root/scripts/ubsan.supp"

# ---- helpers ---------------------------------------------------------------------------

# record SUITE COUNTS: one row of the closing table, under the step running now.
record() { printf '%s\t%s\t%s\n' "$RMM_TEST_STEP" "$1" "$2" >>"$counts_file"; }

# ctest_suite LABEL CTEST-ARGS...: runs ctest and records its passed/skipped/total counts.
ctest_suite() {
  local label="$1" out line total failed skipped
  shift
  out="$(mktemp)"
  ctest "$@" 2>&1 | tee "$out"
  line="$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$out" | tail -n 1 || true)"
  if [[ -z "$line" ]]; then
    record "$label" "no ctest summary line found"
    rm -f "$out"
    return 0
  fi
  total="$(sed -E 's/.* out of ([0-9]+).*/\1/' <<<"$line")"
  failed="$(sed -E 's/.*passed, ([0-9]+) tests? failed.*/\1/' <<<"$line")"
  skipped="$(grep -cE '\((Skipped|Not Run|Disabled)\)$' "$out" || true)"
  rm -f "$out"
  record "$label" "$((total - failed - skipped)) passed, $skipped skipped, $failed failed (of $total)"
}

# cargo_counts LABEL FILE: sums cargo test's "test result:" lines (one per test binary).
cargo_counts() {
  awk -v label="$1" -v step="$RMM_TEST_STEP" '
    /^test result: / {
      binaries++
      for (i = 1; i <= NF; i++) {
        n = $(i - 1) + 0
        if ($i ~ /^passed/) passed += n
        else if ($i ~ /^failed/) failed += n
        else if ($i ~ /^ignored/) ignored += n
      }
    }
    END {
      printf "%s\t%s (%d test binaries incl. doc-tests)\t%d passed, %d failed, %d ignored\n",
        step, label, binaries, passed, failed, ignored
    }' "$2" >>"$counts_file"
}

# run_step NAME TITLE FUNCTION: runs FUNCTION (in a subshell, errexit on) with its output
# shown and logged, then prints its wall time; on failure prints the table and exits.
run_step() {
  local name="$1" title="$2" fn="$3" t0=$SECONDS rc seconds log
  RMM_TEST_STEP=$((RMM_TEST_STEP + 1))
  log="$(printf '%s/%02d-%s.log' "$logs" "$RMM_TEST_STEP" "$fn")"
  printf '\n==== %s\n' "$title"
  set +e
  (
    set -e
    "$fn"
  ) 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  set -e
  seconds=$((SECONDS - t0))
  if ((rc != 0)); then
    printf '%s\t%s\t%s\tFAILED\n' "$RMM_TEST_STEP" "$name" "$seconds" >>"$steps_file"
    printf '\n==== FAILED: %s (exit status %d after %d s; its output: %s)\n' "$name" "$rc" \
      "$seconds" "${log#"$root"/}"
    summary
    exit "$rc"
  fi
  printf '%s\t%s\t%s\tok\n' "$RMM_TEST_STEP" "$name" "$seconds" >>"$steps_file"
  printf -- '---- %s: ok, %d s\n' "$name" "$seconds"
}

duration() {
  local s="$1"
  if ((s >= 60)); then printf '%d min %02d s' $((s / 60)) $((s % 60)); else printf '%d s' "$s"; fi
}

# The closing table: every step with its wall time, each followed by its suites' counts.
summary() {
  local index name seconds status suite counts
  printf '\n==== summary (%s in all; logs in build/test-logs/)\n' "$(duration $((SECONDS - command_start)))"
  printf '%-72s %s\n' "step / suite" "time / counts"
  while IFS=$'\t' read -r index name seconds status; do
    if [[ "$status" == ok ]]; then
      printf '%-72s %s\n' "$name" "$(duration "$seconds")"
    else
      printf '%-72s %s\n' "$name" "$status after $(duration "$seconds")"
    fi
    while IFS=$'\t' read -r _ suite counts; do
      printf '  %-70s %s\n' "$suite" "$counts"
    done < <(awk -F'\t' -v i="$index" '$1 == i' "$counts_file")
  done <"$steps_file"
}

# ---- steps -----------------------------------------------------------------------------

step_setup() { "$root/scripts/setup.sh" test; }

step_fmt() { cargo fmt --all -- --check; }

step_clippy() { cargo clippy --all-targets --workspace -- -D warnings; }

step_header_drift() {
  tmp="$(mktemp -d)" # not local: the EXIT trap (at the end of the step's subshell) reads it
  trap 'rm -rf "$tmp"' EXIT
  cbindgen --config cbindgen.toml --output "$tmp/rmm.h" . 2>"$tmp/cbindgen.log" || {
    cat "$tmp/cbindgen.log" >&2
    exit 1
  }
  if ! diff -u include/rmm/rmm.h "$tmp/rmm.h"; then
    echo "include/rmm/rmm.h is out of date: run cbindgen --config cbindgen.toml --output include/rmm/rmm.h ." >&2
    exit 1
  fi
  echo "include/rmm/rmm.h matches cbindgen's output"
}

step_format() {
  # C and C++ sources as .clang-format lays them out (the check first makes sure clang-format
  # refuses a misformatted line).
  local out
  out="$(bash scripts/check-format.sh)"
  echo "$out"
  record "C/C++ format (clang-format)" "${out#check-format: }"
}

step_doc_links() {
  python3 scripts/check-doc-links.py README.md docs/*.md docs/bench/README.md bench/README.md
}

step_include_layout() {
  # The headers' API generation layout (the rule atop include/rmm/version_config.hpp); a copy
  # with each kind of violation injected must fail the same check.
  local out
  out="$(python3 scripts/check-include-layout.py)"
  echo "$out"
  python3 scripts/check-include-layout.py --self-test
  record "include/rmm layout of the API generations" "${out#check-include-layout: }"
}

step_layers() {
  # The layer rule and the file sizes of src/, then the same check against copies of src/
  # with one violation injected each, every one of which must fail.
  python3 scripts/check-layers.py
  python3 scripts/check-layers.py --self-test
}

step_cargo_test() {
  local pattern hidden
  # Lines of rmm's debug log (stderr, "[thread][time][error ] ...") from the error paths the
  # tests take on purpose (untracked frees, pools dropped with live blocks, a contained
  # panic): kept in build/test-logs/cargo-test.out, not shown; a failing test's own report
  # is shown as always.
  pattern='^\[ *[0-9]+\]\[[0-9:]+\]\[(error|warn) *\] '
  cargo test --release --workspace 2>&1 | tee "$logs/cargo-test.out" |
    { grep --line-buffered -vE "$pattern" || true; }
  hidden="$(grep -cE "$pattern" "$logs/cargo-test.out" || true)"
  echo "($hidden lines of rmm's debug log from error paths tested on purpose: in build/test-logs/cargo-test.out)"
  cargo_counts "cargo test --release --workspace" "$logs/cargo-test.out"
}

step_bench_smoke() {
  local bench_help rows
  bench_help=$(cargo run --release -p rmm-tools --bin rmm-bench -- --help)
  grep -q "^usage: rmm-bench" <<<"$bench_help"
  # The table goes to the log (a smoke run only needs the benchmark to run to its end; W6's
  # "24 MiB request: not served" is a result, the resource being too fragmented to serve it).
  cargo run --release -p rmm-tools --bin rmm-bench -- --quick --json build/bench-smoke.json \
    >"$logs/bench-smoke.out" 2>&1 || {
    cat "$logs/bench-smoke.out"
    exit 1
  }
  rows="$(grep -cE '^[a-z_:0-9]+ +(random|churn|threads|streams|replay|fragmentation|history) ' "$logs/bench-smoke.out" || true)"
  echo "rmm-bench --quick: $rows rows (table: build/test-logs/bench-smoke.out; JSON: build/bench-smoke.json)"
  record "rmm-bench --quick" "$rows rows (resource x workload)"
  cargo run --release -p rmm-tools --bin rmm-replay -- tools/tests/data/replay_3threads.csv --mr pool --mr arena:64M --json build/replay-smoke.json --svg build/replay-smoke.svg
}

step_viz() {
  "$root/scripts/check-viz.sh" | tee "$logs/check-viz.out"
  record "rmm-viz reports in headless Chromium" "$(grep -c '^ok ' "$logs/check-viz.out") checks passed"
}

step_cmake() {
  # cargo's target directory: the repository's target/, shared with `cargo test` above, so
  # the crate is compiled once.
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$root/install" \
    -DRMM_BUILD_TESTS=ON -DRMM_CARGO_TARGET_DIR="$root/target"
  cmake --build build --parallel "$jobs"
  cmake --install build
}

step_symbols() {
  # The symbol lists are read whole first: `grep -q` in a pipeline would stop reading early
  # and fail the pipeline with SIGPIPE under pipefail.
  local rmm_syms preload_syms
  rmm_syms="$(nm -D --defined-only install/lib*/librmm.so)"
  preload_syms="$(nm -D --defined-only install/lib*/librmm_preload.so)"
  if grep -E ' T (cuda|hip)[A-Z]' <<<"$rmm_syms"; then
    echo "librmm.so must not export GPU runtime symbols (that is librmm_preload.so's job)" >&2
    exit 1
  fi
  if grep -E -v ' [TW] (cu[A-Za-z_0-9]+|hip[A-Za-z_0-9]+|dlsym)$' <<<"$preload_syms"; then
    echo "librmm_preload.so must export only what it interposes (its core stays private)" >&2
    exit 1
  fi
  grep -q ' T cudaMalloc$' <<<"$preload_syms"
  grep -q ' T hipMalloc$' <<<"$preload_syms"
  grep -q ' T cuMemAlloc_v2$' <<<"$preload_syms"
  grep -q ' T cuGetProcAddress_v2$' <<<"$preload_syms"
  grep -q ' T dlsym$' <<<"$preload_syms"
  readelf -d install/lib*/librmm_preload.so | grep -q 'soname: \[librmm_preload.so\]'
  readelf -d install/lib*/librmm.so | grep -q 'soname: \[librmm.so\]'
  echo "librmm.so exports no cuda*/hip* symbol; librmm_preload.so (SONAME librmm_preload.so)" \
    "exports only its runtime, driver and dlsym hooks"
}

step_ctest() {
  ctest_suite "ctest build/ (tests/cpp, examples/c)" --test-dir build --output-on-failure \
    --parallel "$jobs"
}

step_consumers() {
  rm -rf "$consumers"
  cmake -S examples/c -B "$consumers/examples/c" -DCMAKE_PREFIX_PATH="$root/install"
  cmake --build "$consumers/examples/c" --parallel "$jobs"
  ctest_suite "examples/c against install/" --test-dir "$consumers/examples/c" --output-on-failure
  check_installed_tools
  cmake -S examples/cpp -B "$consumers/examples/cpp" -DCMAKE_PREFIX_PATH="$root/install"
  cmake --build "$consumers/examples/cpp" --parallel "$jobs"
  ctest_suite "examples/cpp against install/" --test-dir "$consumers/examples/cpp" \
    --output-on-failure
}

# The tools cmake --install put in install/bin: rmm-viz renders the snapshot of an installed
# consumer (examples/c's rmm_c_basic, recorded with RMM_MEMORY_HISTORY); the others run.
check_installed_tools() {
  local snap="$consumers/installed-tools/basic.json" html="$consumers/installed-tools/basic.html" help
  mkdir -p "$consumers/installed-tools"
  RMM_MEMORY_HISTORY="$snap" "$consumers/examples/c/rmm_c_basic" >/dev/null
  install/bin/rmm-viz "$snap" -o "$html"
  grep -q '<script type="application/json" id="rmm-viz-data">' "$html"
  help="$(install/bin/rmm-bench --help)"
  grep -q '^usage: rmm-bench' <<<"$help"
  help="$(install/bin/rmm-replay --help 2>&1 || true)"
  grep -q '^usage: rmm-replay' <<<"$help"
  record "tools in install/bin" "rmm-viz rendered rmm_c_basic's snapshot; rmm-bench, rmm-replay run"
}

step_sanitizers() {
  local project
  for project in tests/cpp examples/c tests/fuzz; do
    # --no-warn-unused-cli: C-only and C++-only projects ignore the other language's flags.
    cmake -S "$project" -B "$san/$project" -DCMAKE_PREFIX_PATH="$root/install" --no-warn-unused-cli \
      -DCMAKE_BUILD_TYPE= -DCMAKE_C_FLAGS="$san_flags" -DCMAKE_CXX_FLAGS="$san_flags" \
      -DCMAKE_EXE_LINKER_FLAGS="$san_link" >/dev/null
    cmake --build "$san/$project" --parallel "$jobs"
    ctest_suite "$project under ASan/UBSan" --test-dir "$san/$project" --output-on-failure \
      --parallel "$jobs"
  done
}

step_fuzz() {
  local out rc refused pattern line
  # ASan's warning for each deliberate request over its 1 TiB limit (the fuzzer asks for
  # SIZE_MAX - 1000 on purpose, and system_memory_resource hands it to posix_memalign): the
  # lines are counted instead of shown; the fuzzer itself checks that each request failed.
  pattern='^==[0-9]+==WARNING: AddressSanitizer failed to allocate 0x[0-9a-f]+ bytes$'
  out="$logs/fuzz.out"
  set +e
  "$san/tests/fuzz/rmm_fuzz_c_abi" --seconds 30 --seed 1 >"$out" 2>&1
  rc=$?
  set -e
  grep -vE "$pattern" "$out" || true
  refused="$(grep -cE "$pattern" "$out" || true)"
  echo "ASan refused $refused deliberate requests over 1 TiB (their warnings are not shown)"
  if ((rc != 0)); then
    echo "rmm_fuzz_c_abi failed (exit status $rc)" >&2
    exit "$rc"
  fi
  line="$(grep -E 'operations, [0-9]+ bad calls' "$out" | tail -n 1 || true)"
  record "rmm_fuzz_c_abi under ASan/UBSan (30 s, seed 1)" \
    "$(sed -E 's/^[^:]*: //' <<<"$line"); $refused absurd sizes refused by ASan"
}

step_cccl() {
  local cccl
  "$root/scripts/setup-cccl.sh"
  for cccl in 2.7 2.8 3.0 3.4 3.5; do
    cmake -S tests/cccl -B "$consumers/cccl-$cccl" -DCMAKE_PREFIX_PATH="$root/install" \
      -DRMM_CUDA_INCLUDE="$root/.deps/cuda/runtime" -DRMM_CCCL_INCLUDE="$root/.deps/cuda/cccl-$cccl"
    cmake --build "$consumers/cccl-$cccl" --parallel "$jobs"
    ctest_suite "tests/cccl, CCCL $cccl" --test-dir "$consumers/cccl-$cccl" --output-on-failure \
      --parallel "$jobs"
  done
}

step_cccl_sanitized() {
  cmake -S tests/cccl -B "$san/tests/cccl" -DCMAKE_PREFIX_PATH="$root/install" \
    -DRMM_CUDA_INCLUDE="$root/.deps/cuda/runtime" -DRMM_CCCL_INCLUDE="$root/.deps/cuda/cccl-3.4" \
    -DCMAKE_BUILD_TYPE= -DCMAKE_CXX_FLAGS="$san_flags" -DCMAKE_EXE_LINKER_FLAGS="$san_link" >/dev/null
  cmake --build "$san/tests/cccl" --parallel "$jobs"
  ctest_suite "tests/cccl, CCCL 3.4, under ASan/UBSan" --test-dir "$san/tests/cccl" \
    --output-on-failure --parallel "$jobs"
}

step_package() {
  local ask refused rc selected=0 rejected=0
  for ask in 25.02 25.06 25.10 26.02 26.06 26.08 26.10; do
    cmake -S tests/package -B "$consumers/package-$ask" -DCMAKE_PREFIX_PATH="$root/install" \
      -DRMM_ASK="$ask" -DRMM_CUDA_INCLUDE="$root/.deps/cuda/runtime" \
      -DRMM_CCCL_INCLUDE="$root/.deps/cuda/cccl-3.5" >/dev/null
    cmake --build "$consumers/package-$ask" --parallel "$jobs"
    "$consumers/package-$ask/generation_check"
    selected=$((selected + 1))
  done
  for ask in 24.12 26.12; do
    set +e
    refused="$(cmake -S tests/package -B "$consumers/package-$ask" -DCMAKE_PREFIX_PATH="$root/install" \
      -DRMM_ASK="$ask" 2>&1)"
    rc=$?
    set -e
    if [[ $rc -eq 0 ]] || ! grep -q "RMM 25.02 to 26.10" <<<"$refused"; then
      echo "$refused" >&2
      echo "find_package(rmm $ask) must be refused with a message naming the supported range" >&2
      exit 1
    fi
    echo "find_package(rmm $ask): refused, naming the supported range"
    rejected=$((rejected + 1))
  done
  record "find_package(rmm <release>)" \
    "$selected of 7 releases select their generation, $rejected of 2 unsupported refused"
}

step_hip_headers() {
  # hipMM 4.0's own CUDA_STREAM_TEST sources, fetched at a pinned commit (not in this tree).
  # A machine that cannot reach GitHub (or gets other bytes) builds the rest and says so.
  local hipmm=()
  if "$root/scripts/setup-hipmm-tests.sh"; then
    hipmm=(-DRMM_HIPMM_TESTS="$root/.deps/hipmm-4.0/cpp/tests")
  else
    record "hipMM 4.0's cuda_stream_tests.cpp, cuda_stream_pool_tests.cpp" \
      "NOT BUILT: scripts/setup-hipmm-tests.sh could not fetch them (its message above)"
  fi
  cmake -S tests/hip -B "$consumers/hip" -DCMAKE_PREFIX_PATH="$root/install" "${hipmm[@]}"
  cmake --build "$consumers/hip" --parallel "$jobs"
  ctest_suite "tests/hip (HIP headers)" --test-dir "$consumers/hip" --output-on-failure \
    --parallel "$jobs"
  # The C++ suites once more, their streams hipStream_t: every test through the HIP branch
  # of the headers (the runtime library is only linked for the error macros' functions).
  cmake -S tests/cpp -B "$consumers/tests/cpp-hip" -DCMAKE_PREFIX_PATH="$root/install" \
    -DCMAKE_CXX_FLAGS="-D__HIP_PLATFORM_AMD__" -DCMAKE_CXX_STANDARD_LIBRARIES="-lamdhip64"
  cmake --build "$consumers/tests/cpp-hip" --parallel "$jobs"
  ctest_suite "tests/cpp with hipStream_t streams" --test-dir "$consumers/tests/cpp-hip" \
    --output-on-failure --parallel "$jobs"
}

step_python() {
  local line
  cargo fmt --manifest-path python/Cargo.toml -- --check
  cargo clippy --manifest-path python/Cargo.toml --all-targets -- -D warnings
  "$root/python/build-and-test.sh" 2>&1 | tee "$logs/pytest.out"
  # pytest's closing line, e.g. "380 passed, 4 skipped in 20.1s" (with or without ===).
  line="$(grep -E '^(=+ )?[0-9]+ (passed|failed|skipped|error)' "$logs/pytest.out" | tail -n 1 || true)"
  line="$(sed -E 's/^=+ //; s/ =+$//; s/ in [0-9.]+s.*$//' <<<"$line")"
  record "pytest (python/tests, the installed wheel)" "${line:-no summary line found}"
}

step_pkg_config() {
  local pc_flags pc_version pc_apis
  export PKG_CONFIG_PATH="$root/install/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
  pc_flags="$(pkg-config --cflags --libs rmm)"
  pc_version="$(pkg-config --modversion rmm)"
  pc_apis="$(pkg-config --variable=api_versions rmm)"
  echo "pkg-config: rmm $pc_version, RMM APIs: $pc_apis"
  [[ "$pc_version" == 26.10.00 && "$pc_apis" == "25.02 "*" 25.10 "*" 26.06 26.08 26.10" ]] || {
    echo "rmm.pc must say the newest RMM API (26.10.00) and list 25.02 ... 26.10 in api_versions" >&2
    exit 1
  }
  echo "pkg-config --cflags --libs rmm: $pc_flags"
  # shellcheck disable=SC2086 # the flags are meant to be split
  cc -std=c11 -Wall -Wextra -Werror -pedantic examples/c/basic.c $pc_flags \
    -o "$consumers/basic_pkgconfig"
  # No LD_LIBRARY_PATH: rmm.pc's Libs carry the run path.
  env -u LD_LIBRARY_PATH "$consumers/basic_pkgconfig" >/dev/null
  echo "examples/c/basic.c built with pkg-config's flags runs without LD_LIBRARY_PATH"
}

step_hip_no_device() {
  local hip_out hip_rc why
  set +e
  hip_out="$(RMM_RUNTIME=hip "$consumers/examples/c/rmm_c_basic" 2>&1)"
  hip_rc=$?
  set -e
  if ((hip_rc == 0)) || ((hip_rc >= 128)) || ! grep -qi "no device" <<<"$hip_out"; then
    echo "$hip_out"
    if ((hip_rc == 0)); then
      echo "expected the HIP runtime to report that there is no device" >&2
    elif ((hip_rc >= 128)); then
      echo "the example crashed (exit status $hip_rc)" >&2
    else
      echo "the message does not say 'no device'" >&2
    fi
    exit 1
  fi
  # Expected: the example stops at its first call and says why. Only the reason is shown.
  why="$(grep -io '[^:;]*no device[^;]*' <<<"$hip_out" | head -n 1 | sed -E 's/^ +//' || true)"
  echo "as expected, rmm_c_basic with RMM_RUNTIME=hip exits with status $hip_rc: $why"
  record "RMM_RUNTIME=hip without a device" "refused as expected (exit status $hip_rc)"
}

# ---- the command -----------------------------------------------------------------------

run_step "setup" "setup (scripts/setup.sh test)" step_setup
run_step "cargo fmt --check" "cargo fmt --check" step_fmt
run_step "cargo clippy" "cargo clippy" step_clippy
run_step "header drift (cbindgen)" "header drift (cbindgen)" step_header_drift
run_step "C/C++ format" "C and C++ layout (scripts/check-format.sh, .clang-format)" step_format
run_step "doc links" "relative links of README.md, docs/ and bench/README.md (scripts/check-doc-links.py)" step_doc_links
run_step "include layout" "the headers' API generation layout (scripts/check-include-layout.py)" step_include_layout
run_step "layers" "the layers of src/ and its file sizes (scripts/check-layers.py)" step_layers
run_step "cargo test" "cargo test --release --workspace (RMM_RUNTIME=$RMM_RUNTIME; includes the LD_PRELOAD interposer against a stand-in cudart)" step_cargo_test
run_step "benchmark smoke run" "benchmark smoke run (rmm-bench --quick, RMM_RUNTIME=$RMM_RUNTIME)" step_bench_smoke
run_step "rmm-viz in headless Chromium" "rmm-viz: recorded runs rendered in headless Chromium (scripts/check-viz.sh; screenshots build/rmm-viz.png, build/rmm-viz-100k.png)" step_viz
run_step "cmake configure/build/install" "cmake configure/build/install (build/, install/)" step_cmake
run_step "exported symbols" "exported symbols: librmm.so exports no runtime symbol; librmm_preload.so is installed" step_symbols
run_step "ctest" "ctest" step_ctest
run_step "consumers of the installed package" "consumers of the installed package" step_consumers
run_step "sanitizers (ASan/UBSan)" "sanitizers: C and C++ suites, C examples and the C ABI fuzzer with -fsanitize=address,undefined (RMM_RUNTIME=$RMM_RUNTIME)" step_sanitizers
run_step "C ABI fuzzer under ASan/UBSan" "C ABI fuzzer under ASan/UBSan (30 s, seed 1)" step_fuzz
run_step "CCCL 2.7, 2.8, 3.0, 3.4, 3.5" "C++ wrapper with CUDA 13 headers and CCCL 2.7, 2.8, 3.0, 3.4, 3.5 (headers from PyPI; host runtime)" step_cccl
run_step "tests/cccl under ASan/UBSan" "tests/cccl with CCCL 3.4 (RMM 26.06's pin) under ASan/UBSan: every generation's CCCL-facing tests" step_cccl_sanitized
run_step "find_package(rmm <version>)" "find_package(rmm <version>): each RMM release selects its API generation; others are refused" step_package
if [[ -e /usr/include/hip/hip_runtime_api.h ]]; then
  run_step "HIP headers" "C++ wrapper on AMD's HIP platform (Debian's HIP headers, hipMM-style code, hipMM 4.0's CUDA_STREAM_TEST; host runtime)" step_hip_headers
else
  echo "note: HIP's headers (libamdhip64-dev) are not installed: the HIP header tests are skipped"
fi
run_step "Python package" "Python package rmm (python/: fmt, clippy, wheel with maturin, pytest; RMM_RUNTIME=$RMM_RUNTIME)" step_python
run_step "pkg-config" "pkg-config" step_pkg_config
if [[ -e /usr/lib/x86_64-linux-gnu/libamdhip64.so.5 ]] || ldconfig -p 2>/dev/null | grep -q 'libamdhip64.so.5'; then
  run_step "HIP runtime without a device" "HIP runtime without a device (RMM_RUNTIME=hip)" step_hip_no_device
fi

summary
printf '\n==== all tests passed\n'
