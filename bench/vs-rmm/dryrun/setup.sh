#!/usr/bin/env bash
# Makes the folder a dry run of bench/vs-rmm/run.sh needs on a machine with no GPU (DRYRUN=D):
#   D/include             CUDA 13.0's runtime headers: CUDA_HEADERS (a folder with
#                         cuda_runtime_api.h and crt/), else /usr/local/cuda/include, else those
#                         of NVIDIA's nvidia-cuda-runtime and nvidia-cuda-crt 13.0 wheels (PyPI)
#   D/lib/libcudart.so.13 the stand-in runtime (standin_cudart.cpp), and libcudart.so: every
#                         program of the run links it and runs on it; rmm-rs too (RMM_RUNTIME=cuda
#                         loads it)
# usage: bash bench/vs-rmm/dryrun/setup.sh [D]      (default /tmp/vs-rmm-dryrun)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
D=${1:-/tmp/vs-rmm-dryrun}
mkdir -p "$D/lib"
if [ -z "${CUDA_HEADERS:-}" ]; then
  c=/usr/local/cuda/include
  [ -f "$c/cuda_runtime_api.h" ] && [ -f "$c/crt/host_defines.h" ] && CUDA_HEADERS=$c
fi
rm -rf "$D/include"
if [ -n "${CUDA_HEADERS:-}" ]; then
  cp -r "$CUDA_HEADERS" "$D/include"
else
  wheels=$D/wheels
  mkdir -p "$wheels"
  for w in nvidia-cuda-runtime nvidia-cuda-crt; do
    compgen -G "$wheels/${w//-/_}-13.0.*.whl" >/dev/null ||
      python3 -m pip download -q --no-deps --only-binary=:all: -d "$wheels" "$w==13.0.*"
  done
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  for w in "$wheels"/nvidia_cuda_runtime-13.0.*.whl "$wheels"/nvidia_cuda_crt-13.0.*.whl; do
    python3 -m zipfile -e "$w" "$tmp"
  done
  cp -r "$tmp/nvidia/cu13/include" "$D/include"
fi
grep -q 'define CUDART_VERSION  *13' "$D/include/cuda_runtime_api.h" || echo "setup.sh: warning: the headers are not CUDA 13's"
# Versioned like NVIDIA's library (symbol version libcudart.so.13), so that programs linked
# against either run on either.
printf 'libcudart.so.13 { global: cuda*; local: *; };\n' >"$D/lib/cudart.map"
g++ -std=c++17 -O2 -fPIC -shared -Wall -I"$D/include" "$here/standin_cudart.cpp" \
  -o "$D/lib/libcudart.so.13" -Wl,-soname,libcudart.so.13 -Wl,--version-script="$D/lib/cudart.map"
ln -sf libcudart.so.13 "$D/lib/libcudart.so"
echo "dry-run folder: $D"
echo "then:  DRYRUN=$D QUICK=1 OUT=/tmp/vs-rmm-out bash bench/vs-rmm/run.sh"
