#!/usr/bin/env bash
# The whole test command (CI runs it through .ci/run): formatting, lints, header drift, Rust
# tests, the CMake build + install, ctest, consumers of the installed package, pkg-config,
# the C++ wrapper on HIP's headers (tests-hip) and the HIP "no device" path when Debian's HIP
# runtime and headers are present.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
jobs="$(nproc 2>/dev/null || echo 2)"
export RMM_RUNTIME="${RMM_RUNTIME:-host}"

step() { printf '\n==== %s\n' "$*"; }

step "setup"
"$root/scripts/setup.sh"

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy"
cargo clippy --all-targets --workspace -- -D warnings

step "header drift (cbindgen)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cbindgen --config cbindgen.toml --output "$tmp/rmm.h" . 2>"$tmp/cbindgen.log" || {
  cat "$tmp/cbindgen.log" >&2
  exit 1
}
if ! diff -u include/rmm/rmm.h "$tmp/rmm.h"; then
  echo "include/rmm/rmm.h is out of date: run cbindgen --config cbindgen.toml --output include/rmm/rmm.h ." >&2
  exit 1
fi

step "cargo test --release --workspace (RMM_RUNTIME=$RMM_RUNTIME; includes the LD_PRELOAD interposer against a stand-in cudart)"
cargo test --release --workspace

step "benchmark smoke run (rmm-bench --quick, RMM_RUNTIME=$RMM_RUNTIME)"
mkdir -p build
bench_help=$(cargo run --release --bin rmm-bench -- --help)
grep -q "^usage: rmm-bench" <<<"$bench_help"
cargo run --release --bin rmm-bench -- --quick --json build/bench-smoke.json
cargo run --release --bin rmm-replay -- tests/data/replay_3threads.csv --mr pool --mr arena:64M --json build/replay-smoke.json --svg build/replay-smoke.svg

step "cmake configure/build/install (build/, install/)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$root/install" \
  -DRMM_BUILD_TESTS=ON
cmake --build build --parallel "$jobs"
cmake --install build

step "exported symbols: librmm.so exports no runtime symbol; librmm_preload.so is installed"
# The symbol lists are read whole first: `grep -q` in a pipeline would stop reading early
# and fail the pipeline with SIGPIPE under pipefail.
rmm_syms="$(nm -D --defined-only install/lib*/librmm.so)"
preload_syms="$(nm -D --defined-only install/lib*/librmm_preload.so)"
if grep -E ' T (cuda|hip)[A-Z]' <<<"$rmm_syms"; then
  echo "librmm.so must not export GPU runtime symbols (that is librmm_preload.so's job)" >&2
  exit 1
fi
grep -q ' T cudaMalloc$' <<<"$preload_syms"
grep -q ' T hipMalloc$' <<<"$preload_syms"

step "ctest"
ctest --test-dir build --output-on-failure --parallel "$jobs"

step "consumers of the installed package"
consumers="$root/build/consumers"
rm -rf "$consumers"
cmake -S examples-c -B "$consumers/examples-c" -DCMAKE_PREFIX_PATH="$root/install"
cmake --build "$consumers/examples-c" --parallel "$jobs"
ctest --test-dir "$consumers/examples-c" --output-on-failure
cmake -S examples-cpp -B "$consumers/examples-cpp" -DCMAKE_PREFIX_PATH="$root/install"
cmake --build "$consumers/examples-cpp" --parallel "$jobs"
ctest --test-dir "$consumers/examples-cpp" --output-on-failure

step "sanitizers: C and C++ suites, C examples and the C ABI fuzzer with -fsanitize=address,undefined (RMM_RUNTIME=$RMM_RUNTIME)"
# Built against the installed package (so they are also its consumers), in their own build
# directory. The Rust library itself is not instrumented; ASan still checks what it reads
# and writes through the intercepted memcpy/memset, and LeakSanitizer sees its mallocs.
#   detect_leaks=1            LeakSanitizer on (scripts/lsan.supp: what is leaked by design)
#   allocator_may_return_null the tests ask for absurd sizes on purpose: malloc must fail
#                             with NULL (as glibc's does), not abort the process
#   halt_on_error=1           UBSan stops at the first report (-fno-sanitize-recover too;
#                             the null check stays recoverable only so that
#                             scripts/ubsan.supp can name Thrust's own headers)
#   -Wno-maybe-uninitialized  GCC's flow analysis gives false positives in libstdc++ (<regex>)
#                             once ASan instruments it; the suites build with -Werror
san_flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -fsanitize-recover=null -O1 -g1 -Wno-maybe-uninitialized"
san_link="-fsanitize=address,undefined"
san="$root/build/sanitize"
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:abort_on_error=0:detect_stack_use_after_return=0"
export LSAN_OPTIONS="suppressions=$root/scripts/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=$root/scripts/ubsan.supp"
san_start=$SECONDS
for project in tests-cpp examples-c tests-fuzz; do
  cmake -S "$project" -B "$san/$project" -DCMAKE_PREFIX_PATH="$root/install" \
    -DCMAKE_BUILD_TYPE= -DCMAKE_C_FLAGS="$san_flags" -DCMAKE_CXX_FLAGS="$san_flags" \
    -DCMAKE_EXE_LINKER_FLAGS="$san_link" >/dev/null
  cmake --build "$san/$project" --parallel "$jobs"
  ctest --test-dir "$san/$project" --output-on-failure --parallel "$jobs"
done
step "C ABI fuzzer under ASan/UBSan (30 s, seed 1)"
"$san/tests-fuzz/rmm_fuzz_c_abi" --seconds 30 --seed 1
echo "sanitizer steps took $((SECONDS - san_start)) s"

step "C++ wrapper with CUDA 13 headers and CCCL 2.7, 2.8, 3.0, 3.4, 3.x (headers from PyPI; host runtime)"
"$root/scripts/setup-cccl.sh"
for cccl in 2.7 2.8 3.0 3.4 3.x; do
  cmake -S tests-cccl -B "$consumers/cccl-$cccl" -DCMAKE_PREFIX_PATH="$root/install" \
    -DRMM_CUDA_INCLUDE="$root/.deps/cuda/runtime" -DRMM_CCCL_INCLUDE="$root/.deps/cuda/cccl-$cccl"
  cmake --build "$consumers/cccl-$cccl" --parallel "$jobs"
  ctest --test-dir "$consumers/cccl-$cccl" --output-on-failure --parallel "$jobs"
done
step "tests-cccl with CCCL 3.4 (RMM 26.06's pin) under ASan/UBSan: every generation's CCCL-facing tests"
cmake -S tests-cccl -B "$san/tests-cccl" -DCMAKE_PREFIX_PATH="$root/install" \
  -DRMM_CUDA_INCLUDE="$root/.deps/cuda/runtime" -DRMM_CCCL_INCLUDE="$root/.deps/cuda/cccl-3.4" \
  -DCMAKE_BUILD_TYPE= -DCMAKE_CXX_FLAGS="$san_flags" -DCMAKE_EXE_LINKER_FLAGS="$san_link" >/dev/null
cmake --build "$san/tests-cccl" --parallel "$jobs"
ctest --test-dir "$san/tests-cccl" --output-on-failure --parallel "$jobs"

step "find_package(rmm <version>): each RMM release selects its API generation; others are refused"
for ask in 25.02 25.06 25.10 26.02 26.06; do
  cmake -S tests-package -B "$consumers/package-$ask" -DCMAKE_PREFIX_PATH="$root/install" \
    -DRMM_ASK="$ask" -DRMM_CUDA_INCLUDE="$root/.deps/cuda/runtime" \
    -DRMM_CCCL_INCLUDE="$root/.deps/cuda/cccl-3.x" >/dev/null
  cmake --build "$consumers/package-$ask" --parallel "$jobs"
  "$consumers/package-$ask/generation_check"
done
for ask in 24.12 26.08; do
  set +e
  refused="$(cmake -S tests-package -B "$consumers/package-$ask" -DCMAKE_PREFIX_PATH="$root/install" \
    -DRMM_ASK="$ask" 2>&1)"
  rc=$?
  set -e
  if [[ $rc -eq 0 ]] || ! grep -q "RMM 25.02 to 26.06" <<<"$refused"; then
    echo "$refused" >&2
    echo "find_package(rmm $ask) must be refused with a message naming the supported range" >&2
    exit 1
  fi
  echo "find_package(rmm $ask): refused, naming the supported range"
done

if [[ -e /usr/include/hip/hip_runtime_api.h ]]; then
  step "C++ wrapper on AMD's HIP platform (Debian's HIP headers, hipMM-style code; host runtime)"
  cmake -S tests-hip -B "$consumers/hip" -DCMAKE_PREFIX_PATH="$root/install"
  cmake --build "$consumers/hip" --parallel "$jobs"
  ctest --test-dir "$consumers/hip" --output-on-failure --parallel "$jobs"
  # The C++ suites once more, their streams hipStream_t: every test through the HIP branch
  # of the headers (the runtime library is only linked for the error macros' functions).
  cmake -S tests-cpp -B "$consumers/tests-cpp-hip" -DCMAKE_PREFIX_PATH="$root/install" \
    -DCMAKE_CXX_FLAGS="-D__HIP_PLATFORM_AMD__" -DCMAKE_CXX_STANDARD_LIBRARIES="-lamdhip64"
  cmake --build "$consumers/tests-cpp-hip" --parallel "$jobs"
  ctest --test-dir "$consumers/tests-cpp-hip" --output-on-failure --parallel "$jobs"
else
  echo "note: HIP's headers (libamdhip64-dev) are not installed: the HIP header tests are skipped"
fi

step "Python package rmm (python/: fmt, clippy, wheel with maturin, pytest; RMM_RUNTIME=$RMM_RUNTIME)"
cargo fmt --manifest-path python/Cargo.toml -- --check
cargo clippy --manifest-path python/Cargo.toml --all-targets -- -D warnings
"$root/python/build-and-test.sh"

step "pkg-config"
export PKG_CONFIG_PATH="$root/install/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
pc_flags="$(pkg-config --cflags --libs rmm)"
pc_version="$(pkg-config --modversion rmm)"
pc_apis="$(pkg-config --variable=api_versions rmm)"
echo "pkg-config: rmm $pc_version, RMM APIs: $pc_apis"
[[ "$pc_version" == 26.06.00 && "$pc_apis" == "25.02 "*" 25.10 "*" 26.06" ]] || {
  echo "rmm.pc must say the newest RMM API (26.06.00) and list 25.02 ... 26.06 in api_versions" >&2
  exit 1
}
echo "pkg-config --cflags --libs rmm: $pc_flags"
# shellcheck disable=SC2086 # the flags are meant to be split
cc -std=c11 -Wall -Wextra -Werror -pedantic examples-c/basic.c $pc_flags \
  -o "$consumers/basic_pkgconfig"
# No LD_LIBRARY_PATH: rmm.pc's Libs carry the run path.
env -u LD_LIBRARY_PATH "$consumers/basic_pkgconfig" >/dev/null

if [[ -e /usr/lib/x86_64-linux-gnu/libamdhip64.so.5 ]] || ldconfig -p 2>/dev/null | grep -q 'libamdhip64.so.5'; then
  step "HIP runtime without a device (RMM_RUNTIME=hip)"
  set +e
  hip_out="$(RMM_RUNTIME=hip "$consumers/examples-c/rmm_c_basic" 2>&1)"
  hip_rc=$?
  set -e
  echo "$hip_out"
  echo "exit status: $hip_rc"
  if ((hip_rc == 0)); then
    echo "expected the HIP runtime to report that there is no device" >&2
    exit 1
  fi
  if ((hip_rc >= 128)); then
    echo "the example crashed (exit status $hip_rc)" >&2
    exit 1
  fi
  if ! grep -qi "no device" <<<"$hip_out"; then
    echo "the message does not say 'no device'" >&2
    exit 1
  fi
fi

step "all tests passed"
