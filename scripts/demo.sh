#!/usr/bin/env bash
# The demo: builds and installs rmm-rs (into install/), builds examples/c/demo_pool.c against
# the installed package and runs it: an rmm pool serving a few thousand allocate/free pairs
# of mixed sizes, timed against the runtime's own malloc/free. It runs on the GPU runtime
# found (RMM_RUNTIME=auto), or on the host emulation when there is none.
# Installs only the build prerequisites (scripts/setup.sh build). The build's own output goes
# to build/demo.log; its end is printed if a step fails.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
jobs="$(nproc 2>/dev/null || echo 2)"
start=$SECONDS

echo "rmm-rs demo: build and install rmm-rs into install/, then time an rmm pool against the runtime's malloc/free"
"$root/scripts/setup.sh" build

mkdir -p build
log="$root/build/demo.log"
: >"$log"

# Runs a build step quietly (its output appended to the log) and prints how long it took.
quietly() {
  local what="$1" t0=$SECONDS
  shift
  printf '%-66s' "$what"
  if ! "$@" >>"$log" 2>&1; then
    printf 'FAILED\n'
    tail -n 60 "$log" >&2
    echo "demo: '$*' failed; the whole output is in $log" >&2
    exit 1
  fi
  printf '%4d s\n' $((SECONDS - t0))
}

quietly "configure (cmake, Release)" \
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$root/install" \
  -DRMM_BUILD_TESTS=OFF
quietly "build librmm and the tools (cargo, through cmake)" cmake --build build --parallel "$jobs"
quietly "install into install/" cmake --install build
demo="$root/build/demo-examples/c"
build_demo() {
  cmake -S examples/c -B "$demo" -DCMAKE_PREFIX_PATH="$root/install" &&
    cmake --build "$demo" --parallel "$jobs" --target rmm_c_demo_pool
}
quietly "build examples/c/demo_pool.c against install/ (find_package)" build_demo
echo "built and installed in $((SECONDS - start)) s (build output: build/demo.log)"

echo
echo "==== build/demo-examples/c/rmm_c_demo_pool (RMM_RUNTIME=${RMM_RUNTIME:-auto})"
exec "$demo/rmm_c_demo_pool"
