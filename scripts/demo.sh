#!/usr/bin/env bash
# Builds and installs rmm-rs, builds the C example against the installed package and runs
# it on the GPU runtime found (RMM_RUNTIME=auto), or on the host emulation when there is none.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
jobs="$(nproc 2>/dev/null || echo 2)"

"$root/scripts/setup.sh"
cargo build --release
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$root/install" \
  -DRMM_BUILD_TESTS=OFF
cmake --build build --parallel "$jobs"
cmake --install build

demo="$root/build/demo-examples-c"
cmake -S examples-c -B "$demo" -DCMAKE_PREFIX_PATH="$root/install"
cmake --build "$demo" --parallel "$jobs" --target rmm_c_basic

runtime="${RMM_RUNTIME:-auto}"
echo "==== running the C example with RMM_RUNTIME=$runtime"
set +e
RMM_RUNTIME="$runtime" "$demo/rmm_c_basic"
rc=$?
set -e
# The example exits 2 when no GPU runtime is usable (RMM_STATUS_NO_RUNTIME).
if ((rc == 2)) && [[ "$runtime" == auto ]]; then
  echo "==== no usable GPU runtime here (exit status $rc); rerunning with RMM_RUNTIME=host (emulated device)"
  RMM_RUNTIME=host "$demo/rmm_c_basic"
  rc=$?
fi
exit "$rc"
