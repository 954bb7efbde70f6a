#!/usr/bin/env bash
# Installs what building and testing rmm-rs needs, only what is missing. Idempotent.
set -euo pipefail

# libamdhip64-dev: HIP's headers for tests-hip. Without hipcc beside them, as here, they
# also check that neither the package's headers nor its CMake files trip over them.
packages=(cmake g++ libgtest-dev libthrust-dev pkg-config libamdhip64-5 libamdhip64-dev)
missing=()
for pkg in "${packages[@]}"; do
  if ! dpkg -s "$pkg" >/dev/null 2>&1; then missing+=("$pkg"); fi
done
# pip (scripts/setup-cccl.sh fetches CUDA's header wheels with it): Debian's, unless a
# Python with pip is already first on PATH.
if ! python3 -m pip --version >/dev/null 2>&1 && ! dpkg -s python3-pip >/dev/null 2>&1; then
  missing+=(python3-pip)
fi
if ((${#missing[@]})); then
  if [[ $(id -u) -eq 0 ]]; then
    echo "setup: installing ${missing[*]}"
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
  else
    echo "setup: missing packages (not root, not installing): ${missing[*]}" >&2
  fi
fi

cbindgen_version=0.29.0
if [[ "$(cbindgen --version 2>/dev/null || true)" != "cbindgen $cbindgen_version" ]]; then
  echo "setup: installing cbindgen $cbindgen_version"
  cargo install cbindgen --version "$cbindgen_version" --locked
fi
