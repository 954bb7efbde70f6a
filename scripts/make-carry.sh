#!/usr/bin/env bash
# Builds what the GPU machine (no Rust toolchain) needs into .carry/ (gitignored):
#   bin/     release test executables of the workspace (cargo test --no-run)
#   lib/     librmm.so and librmm_preload.so
#   prefix/  an installed prefix (cmake --install) for the C/C++ suites, without librmm.a
#   rmm-bench, rmm-replay
# Everything is stripped of debug info so that the folder stays well under the 64 MiB that
# the device tool carries. Then on the GPU machine: scripts/gpu-rust-tests.sh,
# scripts/gpu-cpp-tests.sh, scripts/gpu-preload.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .carry && mkdir -p .carry/bin .carry/lib
cargo build --release --workspace --bins
cargo test --release --workspace --no-run --message-format=json 2>/dev/null |
  python3 -c '
import json, sys, shutil
for line in sys.stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    exe = msg.get("executable")
    if msg.get("reason") == "compiler-artifact" and exe and msg["profile"]["test"]:
        if "standin" in exe or "replay" in exe:
            continue
        shutil.copy(exe, ".carry/bin/")
'
cp target/release/librmm.so target/release/librmm_preload.so .carry/lib/
cp target/release/rmm-bench target/release/rmm-replay .carry/
cmake -S . -B build-carry -DCMAKE_BUILD_TYPE=Release -DRMM_BUILD_TESTS=OFF >/dev/null
cmake --build build-carry --parallel "$(nproc)" >/dev/null
cmake --install build-carry --prefix .carry/prefix >/dev/null
rm -f .carry/prefix/lib/librmm.a .carry/prefix/lib/*/librmm.a
find .carry -type f -perm -u+x -exec strip --strip-debug {} + 2>/dev/null || true
strip --strip-debug .carry/lib/*.so .carry/prefix/lib/*.so* 2>/dev/null || true
du -sh .carry
