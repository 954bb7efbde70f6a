#!/usr/bin/env bash
# Builds what the GPU machine (no Rust toolchain) needs into .carry/ (gitignored):
#   bin/     release test executables of the workspace (cargo test --no-run)
#   lib/     librmm.so and librmm_preload.so
#   prefix/  an installed prefix (cmake --install) for the C/C++ suites, without librmm.a
#   wheel/   the Python wheel (abi3), for scripts/gpu-rmm-own-python-tests.sh and Dask-CUDA
#   rmm-bench, rmm-replay, rmm-viz
# Release builds carry no debug info, so the folder stays well under the 64 MiB that the
# device tool carries. Other folders under .carry/ (RMM's suites, bench-vs-rmm) are kept.
# Then on the GPU machine: scripts/gpu-rust-tests.sh, scripts/gpu-cpp-tests.sh,
# scripts/gpu-preload.sh. Any failing step stops the script with its own error output.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
rm -rf .carry/bin .carry/lib .carry/prefix .carry/wheel .carry/rmm-bench .carry/rmm-replay .carry/rmm-viz
mkdir -p .carry/bin .carry/lib .carry/wheel

echo "make-carry: cargo build and test executables (release)"
cargo build --release --workspace --bins
# JSON messages go to stdout (parsed below); cargo's errors stay on stderr.
cargo test --release --workspace --no-run --message-format=json >.carry/test-artifacts.json
python3 - <<'PY'
import json, shutil
with open(".carry/test-artifacts.json") as f:
    for line in f:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        exe = msg.get("executable")
        if msg.get("reason") == "compiler-artifact" and exe and msg["profile"]["test"]:
            # The interposer's and the tools' integration tests build and run programs of
            # this checkout's target directory (stand-in libraries, the tools): they run
            # here, in the test command, not from .carry/bin.
            package = msg["package_id"]
            kind = msg["target"]["kind"]
            if ("rmm-preload" in package or "rmm-tools" in package) and kind == ["test"]:
                continue
            shutil.copy(exe, ".carry/bin/")
PY
rm .carry/test-artifacts.json
cp target/release/librmm.so target/release/librmm_preload.so .carry/lib/
cp target/release/rmm-bench target/release/rmm-replay target/release/rmm-viz .carry/

echo "make-carry: installed prefix"
cmake -S . -B build-carry -DCMAKE_BUILD_TYPE=Release -DRMM_BUILD_TESTS=OFF \
  -DRMM_CARGO_TARGET_DIR="$root/target"
cmake --build build-carry --parallel "$(nproc)"
cmake --install build-carry --prefix .carry/prefix
rm -f .carry/prefix/lib/librmm.a .carry/prefix/lib/*/librmm.a

echo "make-carry: Python wheel"
venv="$root/python/.venv"
if [[ ! -x "$venv/bin/maturin" ]]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet "maturin>=1.5,<2"
fi
# The wheel's rmm-viz command runs the program it carries (as python/build-and-test.sh stages it).
mkdir -p python/rmm/bin
install -m 755 target/release/rmm-viz python/rmm/bin/rmm-viz
(cd python && RMM_LIB_DIR="$root/target/release" PYO3_PYTHON="$venv/bin/python" \
  "$venv/bin/maturin" build --release --interpreter "$venv/bin/python" -o "$root/.carry/wheel")

# Cargo's release profile strips debug info already; this keeps the folder small should a
# profile override bring it back.
strip --strip-debug .carry/bin/* .carry/rmm-bench .carry/rmm-replay .carry/rmm-viz .carry/lib/*.so
du -sh .carry/bin .carry/lib .carry/prefix .carry/wheel
