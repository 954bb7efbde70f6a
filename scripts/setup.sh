#!/usr/bin/env bash
# Installs what building (scripts/demo.sh) or testing (scripts/test.sh) rmm-rs needs, only
# what is missing. Idempotent. As root it runs apt-get; otherwise it prints what is missing.
#   scripts/setup.sh build   what building and installing librmm and a C example needs:
#                            a C and C++ compiler, make and CMake (Rust itself is a prerequisite)
#   scripts/setup.sh test    (the default) also the test-only tools: GoogleTest, Thrust,
#                            pkg-config, Debian's HIP runtime and headers, pip, curl, libclang (the
#                            Python extension's bindings are generated from rmm.h by bindgen),
#                            and cbindgen (built with cargo) for the header drift check
set -euo pipefail

mode="${1:-test}"
case "$mode" in
  build | test) ;;
  *)
    echo "usage: $0 [build|test]" >&2
    exit 2
    ;;
esac

# Installs the Debian packages named that are not installed yet.
apt_install() {
  local missing=() pkg log
  for pkg in "$@"; do
    if ! dpkg -s "$pkg" >/dev/null 2>&1; then missing+=("$pkg"); fi
  done
  ((${#missing[@]})) || return 0
  if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null; then
    echo "setup: missing packages (not root or no apt-get, not installing): ${missing[*]}" >&2
    return 0
  fi
  echo "setup: installing ${missing[*]} (apt-get)"
  log="$(mktemp)"
  if ! { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
    --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "setup: apt-get failed (above: the end of its output)" >&2
    rm -f "$log"
    return 1
  fi
  rm -f "$log"
}

# Build: what CMake and cargo need. cmake's Debian package only recommends make, and
# --no-install-recommends leaves it out. Nothing to do when the tools are all on PATH.
build_packages=(cmake make gcc g++)
if ! command -v cargo >/dev/null; then
  echo "setup: cargo is not on PATH: install Rust (https://rustup.rs) first" >&2
  exit 1
fi
if ! { command -v cmake && command -v make && command -v cc && command -v c++; } >/dev/null; then
  apt_install "${build_packages[@]}"
fi
[[ "$mode" == build ]] && exit 0

# Test: libamdhip64-dev is HIP's headers for tests/hip. Without hipcc beside them, as here,
# they also check that neither the package's headers nor its CMake files trip over them.
# chromium: rmm-viz's reports are rendered and checked in a real browser (scripts/check-viz.sh).
# libclang-dev: python/build.rs generates the extension's C bindings from rmm.h with bindgen,
# which loads libclang (and its builtin headers) at build time.
# curl: scripts/setup-hipmm-tests.sh fetches two of hipMM 4.0's test programs from GitHub.
# No rocThrust: Debian 12 does not package it (only rocPRIM, librocprim-dev), so the Thrust
# layer is tested on CUDA's headers only (tests/cccl).
test_packages=(clang-format libgtest-dev libthrust-dev pkg-config libamdhip64-5 libamdhip64-dev chromium
  libclang-dev curl ca-certificates)
# pip (scripts/setup-cccl.sh fetches CUDA's header wheels with it): Debian's, unless a
# Python with pip is already first on PATH.
if ! python3 -m pip --version >/dev/null 2>&1; then test_packages+=(python3-pip); fi
apt_install "${test_packages[@]}"

cbindgen_version=0.29.0
if [[ "$(cbindgen --version 2>/dev/null || true)" != "cbindgen $cbindgen_version" ]]; then
  echo "setup: installing cbindgen $cbindgen_version (cargo install)"
  cargo install cbindgen --version "$cbindgen_version" --locked
fi
