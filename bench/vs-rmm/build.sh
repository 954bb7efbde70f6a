#!/usr/bin/env bash
# Builds every program of the side-by-side run (run.sh calls it), in parallel, with one compiler
# and one set of flags:
#   vs_rmm_bench_rapids        vs_rmm_bench.cpp against RAPIDS's librmm 26.10 (the librmm-cu13
#                              wheel: headers, compiled librmm.so, rapids-logger's library)
#   vs_rmm_bench_rmmrs         the same file against rmm-rs's installed package
#                              (-DRMM_API_VERSION=2610, librmm.so)
#   random_allocations_rapids  RMM 26.06's benchmarks/random_allocations/random_allocations.cpp
#   random_allocations_rmmrs   (google benchmark 1.9.5, what rapids-cmake 26.06 pins): the file
#                              as it is where it compiles (random_allocations_asis_<v>.o), else
#                              with `#include <rmm/cuda_stream_view.hpp>` added
#                              (random_allocations_patched_<v>.o), which RAPIDS 26.10's headers
#                              no longer include for it; build-status.txt says which
#                              (random_allocations_<v>-source as-is|patched)
#   bvr/...                    with BVR set: the 23.12 harness's own build.sh (perf_anchor
#                              against RMM 23.12, and its other programs), into $BUILD/bvr
# Flags: -std=c++20 -O3 -DNDEBUG, host C++ (no device code), CCCL 3.5 first on the include path
# (the copy inside the librmm wheel, which its CMake package uses; CCCL_DIR chooses another) with
# the definitions RAPIDS's CMake package puts on CCCL::CCCL, CUDA's headers after it; each
# program links the CUDA runtime library (libcudart.so.13) of CUDA_LIB.
#
# env: CARRY (the carry folder, .carry/vs-rmm), BUILD (output folder), CUDA_INC, CUDA_LIB (default
# from CUDA_HOME, nvcc or /usr/local/cuda), CXX (g++), JOBS (nproc), CCCL_DIR, BVR (optional).
# Writes $BUILD/build-status.txt ("<target> ok|FAILED" a line), logs in $BUILD/logs.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
CARRY=${CARRY:?set CARRY to the carry folder (.carry/vs-rmm)}
BUILD=${BUILD:?set BUILD to the build folder}
CXX=${CXX:-g++}
JOBS=${JOBS:-$(nproc)}
if [ -z "${CUDA_HOME:-}" ]; then
  if command -v nvcc >/dev/null 2>&1; then
    CUDA_HOME=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")
  else
    CUDA_HOME=/usr/local/cuda
  fi
fi
CUDA_INC=${CUDA_INC:-$CUDA_HOME/include}
if [ -z "${CUDA_LIB:-}" ]; then
  for d in "$CUDA_HOME/lib64" "$CUDA_HOME/lib" "$CUDA_HOME/targets/x86_64-linux/lib"; do
    [ -e "$d/libcudart.so" ] && { CUDA_LIB=$d; break; }
  done
  CUDA_LIB=${CUDA_LIB:-$CUDA_HOME/lib64}
fi
mkdir -p "$BUILD/logs" "$BUILD/gbench-obj"
: >"$BUILD/build-status.txt"
: >"$BUILD/logs/times.txt"

status() { echo "$1 $2" >>"$BUILD/build-status.txt"; }
# step TARGET COMMAND...: runs the command with its output in logs/TARGET.log, records the result.
step() {
  local t=$1 t0=$SECONDS
  shift
  if "$@" >"$BUILD/logs/$t.log" 2>&1; then status "$t" ok; else status "$t" FAILED; fi
  echo "$t: $((SECONDS - t0)) s" >>"$BUILD/logs/times.txt"
}
built() { grep -qx "$1 ok" "$BUILD/build-status.txt"; }

# The wheels, unpacked (a wheel is a zip file).
unpack() {
  local whl
  rm -rf "$BUILD/rapids" && mkdir -p "$BUILD/rapids"
  for whl in "$CARRY"/rapids/librmm_cu13-*.whl "$CARRY"/rapids/rapids_logger-*.whl; do
    [ -f "$whl" ] || { echo "no wheel $whl"; return 1; }
    python3 -m zipfile -e "$whl" "$BUILD/rapids/" || return 1
  done
  [ -f "$BUILD/rapids/librmm/lib64/librmm.so" ] && [ -f "$BUILD/rapids/rapids_logger/lib64/librapids_logger.so" ]
}
step unpack-wheels unpack
W=$BUILD/rapids/librmm
L=$BUILD/rapids/rapids_logger
CCCL_DIR=${CCCL_DIR:-$W/include/rapids}
R=$CARRY/rmmrs
GB=$CARRY/benchmark-1.9.5
RA=$CARRY/rmm-26.06/benchmarks/random_allocations/random_allocations.cpp

COMMON=(-std=c++20 -O3 -DNDEBUG -Wall -Wno-unknown-pragmas -pthread
  -DCUB_DISABLE_NAMESPACE_MAGIC -DCUB_IGNORE_NAMESPACE_MAGIC_ERROR -DTHRUST_DISABLE_ABI_NAMESPACE
  -DTHRUST_IGNORE_ABI_NAMESPACE_ERROR -DCCCL_DISABLE_PDL)
RAPIDS_FLAGS=(-I"$W/include" -I"$L/include" -I"$CCCL_DIR" -isystem "$CUDA_INC")
# librmm.so needs librapids_logger.so but finds only its own folder ($ORIGIN): the program keeps
# the logger as a dependency of its own (where the linker drops unused libraries by default, as
# Ubuntu's does), so that the loader has it before librmm.so asks.
RAPIDS_LIBS=(-L"$W/lib64" -lrmm -L"$L/lib64" -Wl,--push-state,--no-as-needed -lrapids_logger
  -Wl,--pop-state -L"$CUDA_LIB" -lcudart -ldl -pthread -Wl,-rpath,"$W/lib64:$L/lib64:$CUDA_LIB")
RMMRS_FLAGS=(-DRMM_API_VERSION=2610 -I"$R/include" -I"$CCCL_DIR" -isystem "$CUDA_INC")
RMMRS_LIBS=(-L"$R/lib" -lrmm -L"$CUDA_LIB" -lcudart -ldl -pthread -Wl,-rpath,"$R/lib:$CUDA_LIB")
GB_FLAGS=(-I"$GB/include" -DBENCHMARK_STATIC_DEFINE -I"$CARRY/rmm-26.06")
{
  echo "compiler: $("$CXX" --version | head -1)"
  echo "CUDA_INC=$CUDA_INC CUDA_LIB=$CUDA_LIB CCCL_DIR=$CCCL_DIR"
  echo "common: ${COMMON[*]}"
  echo "rapids: ${RAPIDS_FLAGS[*]} | ${RAPIDS_LIBS[*]}"
  echo "rmm-rs: ${RMMRS_FLAGS[*]} | ${RMMRS_LIBS[*]}"
} >"$BUILD/logs/flags.txt"
cat "$BUILD/logs/flags.txt"

bench() { # variant-token flags-var libs-var output
  local -n fl=$2 li=$3
  "$CXX" "${COMMON[@]}" -DVSR_VARIANT="$1" "${fl[@]}" -c "$here/vs_rmm_bench.cpp" -o "$4.o" &&
    "$CXX" "$4.o" -o "$4" "${li[@]}"
}
gbench_lib() {
  local srcs=() s
  for s in "$GB"/src/*.cc; do
    [ "$(basename "$s")" = benchmark_main.cc ] || srcs+=("$s")
  done
  printf '%s\n' "${srcs[@]}" | xargs -P "$JOBS" -I{} sh -c '"$0" -std=c++17 -O3 -DNDEBUG \
    -DHAVE_STD_REGEX -DHAVE_STEADY_CLOCK -DHAVE_PTHREAD_AFFINITY -DBENCHMARK_STATIC_DEFINE \
    -I"$1/include" -I"$1/src" -c "{}" -o "$2/$(basename "{}" .cc).o"' "$CXX" "$GB" "$BUILD/gbench-obj" &&
    ar rcs "$BUILD/libbenchmark.a" "$BUILD"/gbench-obj/*.o
}
ra_object() { # source flags-var output
  local -n fl=$2
  "$CXX" "${COMMON[@]}" "${fl[@]}" "${GB_FLAGS[@]}" -c "$1" -o "$3"
}

if built unpack-wheels; then
  step vs_rmm_bench_rapids bench rmm-26.10 RAPIDS_FLAGS RAPIDS_LIBS "$BUILD/vs_rmm_bench_rapids" &
fi
step vs_rmm_bench_rmmrs bench rmm-rs RMMRS_FLAGS RMMRS_LIBS "$BUILD/vs_rmm_bench_rmmrs" &
step libbenchmark.a gbench_lib &
# RMM's own benchmark, as it is and with the include RAPIDS 26.10 needs (that copy generated here
# from the carried file: nothing of RMM is tracked); the one linked is the first that compiles.
sed 's|^#include <rmm/cuda_device.hpp>|&\n#include <rmm/cuda_stream_view.hpp>|' "$RA" \
  >"$BUILD/random_allocations.cpp"
diff "$RA" "$BUILD/random_allocations.cpp" >"$BUILD/logs/random_allocations.diff"
for v in rapids rmmrs; do
  [ $v = rapids ] && ! built unpack-wheels && continue
  flags=RMMRS_FLAGS
  [ $v = rapids ] && flags=RAPIDS_FLAGS
  step "random_allocations_asis_$v.o" ra_object "$RA" $flags "$BUILD/random_allocations_asis_$v.o" &
  step "random_allocations_patched_$v.o" ra_object "$BUILD/random_allocations.cpp" $flags \
    "$BUILD/random_allocations_patched_$v.o" &
done
if [ -n "${BVR:-}" ] && [ -f "$BVR/harness/build.sh" ]; then
  mkdir -p "$BUILD/bvr"
  step bvr-build env CARRY="$BVR" BUILD="$BUILD/bvr" CUDA_INC="$CUDA_INC" CUDA_LIB="$CUDA_LIB" \
    JOBS="$JOBS" bash "$BVR/harness/build.sh" &
fi
wait
if built libbenchmark.a; then
  for v in rapids rmmrs; do
    src=asis
    built "random_allocations_asis_$v.o" || src=patched
    built "random_allocations_${src}_$v.o" || continue
    status "random_allocations_$v-source" "$([ $src = asis ] && echo as-is || echo patched)"
    libs=RMMRS_LIBS
    [ $v = rapids ] && libs=RAPIDS_LIBS
    declare -n li=$libs
    step "random_allocations_$v" "$CXX" "$BUILD/random_allocations_${src}_$v.o" \
      "$BUILD/libbenchmark.a" -o "$BUILD/random_allocations_$v" "${li[@]}"
    unset -n li
  done
fi
if [ -f "$BUILD/bvr/build-status.txt" ]; then
  sed 's/^/bvr\//' "$BUILD/bvr/build-status.txt" >>"$BUILD/build-status.txt"
fi
sort "$BUILD/build-status.txt"
