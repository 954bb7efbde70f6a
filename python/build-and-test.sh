#!/usr/bin/env bash
# Builds and tests the Python package `rmm` from a fresh machine:
#   venv (python/.venv) with maturin, pytest and numpy; librmm.so and rmm-viz (cargo build
#   --release at the repository root); the abi3 wheel (maturin build --release, into
#   python/dist/), which bundles librmm.so, the headers, the CMake package and rmm-viz (the
#   console script `rmm-viz`); the wheel installed in the venv; pytest on the host runtime
#   (RMM_RUNTIME=host unless set).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
export RMM_RUNTIME="${RMM_RUNTIME:-host}"
python="${PYTHON:-python3}"
venv="$here/.venv"

step() { printf '\n==== python: %s\n' "$*"; }

step "virtual environment ($venv)"
if [ -x "$venv/bin/python" ] && ! "$venv/bin/python" -m pip --version >/dev/null 2>&1; then
  rm -rf "$venv" # left without pip by a failed attempt (no ensurepip)
fi
if [ ! -x "$venv/bin/python" ]; then
  if ! "$python" -m venv "$venv"; then
    # Debian ships venv (and ensurepip) separately.
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      pyver="$("$python" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
      apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv "python${pyver}-venv" \
        || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv
      rm -rf "$venv"
      "$python" -m venv "$venv"
    else
      echo "python3 -m venv failed: install python3-venv" >&2
      exit 1
    fi
  fi
fi
"$venv/bin/python" -m pip install -q --upgrade pip
"$venv/bin/python" -m pip install -q "maturin>=1.5,<2" pytest numpy

step "librmm.so (cargo build --release -p rmm-capi at the repository root)"
(cd "$root" && cargo build --release -p rmm-capi)

step "rmm-viz (cargo build --release -p rmm-tools --bin rmm-viz), staged as rmm/bin/rmm-viz"
(cd "$root" && cargo build --release -p rmm-tools --bin rmm-viz)
mkdir -p "$here/rmm/bin"
install -m 755 "${CARGO_TARGET_DIR:-$root/target}/release/rmm-viz" "$here/rmm/bin/rmm-viz"

step "wheel (maturin build --release, abi3)"
rm -rf "$here/dist"
(cd "$here" && PYO3_PYTHON="$venv/bin/python" "$venv/bin/maturin" build --release \
  --interpreter "$venv/bin/python" -o "$here/dist")
wheel="$(ls "$here"/dist/rmm-*.whl)"
echo "$wheel"

step "install the wheel"
"$venv/bin/python" -m pip install -q --force-reinstall --no-deps "$wheel"

step "pytest (RMM_RUNTIME=$RMM_RUNTIME)"
# From the tests directory, so `import rmm` is the installed wheel, not python/rmm/.
cd "$here/tests"
"$venv/bin/python" -m pytest -q -p no:cacheprovider "$@" .
