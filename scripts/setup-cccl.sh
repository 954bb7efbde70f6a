#!/usr/bin/env bash
# Fetches CUDA's runtime headers and several CCCL releases from PyPI (NVIDIA's own header
# wheels; no GPU, driver or toolkit needed) into .deps/cuda/, so that the C++ wrapper is
# compiled in CI the way users compile it on a GPU machine: with cudaStream_t streams and
# `cuda::mr` from CCCL 2.7 / 2.8 (RMM 25.02's), 3.0 (CUDA 13.0's; CCCL 3.1 renamed the resource
# interface after it), 3.4 (RMM 26.06's pin) and 3.5 (RMM 26.10's). Idempotent; prints nothing
# when everything is there.
#
#   .deps/cuda/runtime/include  cuda_runtime_api.h and crt/ (CUDA 13)
#   .deps/cuda/cccl-<ver>/      CCCL headers (cuda/, cub/, thrust/)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
deps="$root/.deps/cuda"
mkdir -p "$deps"

# name of a directory under .deps/cuda -> "wheel-spec path-inside-the-wheel"
declare -A wheels=(
  [runtime]="nvidia-cuda-runtime==13.0.96 nvidia/cu13/include"
  [crt]="nvidia-cuda-crt==13.0.88 nvidia/cu13/include"
  [cccl-2.7]="nvidia-cuda-cccl-cu12==12.8.90 nvidia/cuda_cccl/include"
  [cccl-2.8]="nvidia-cuda-cccl-cu12==12.9.27 nvidia/cuda_cccl/include"
  [cccl-3.0]="nvidia-cuda-cccl==13.0.85 nvidia/cu13/include/cccl"
  [cccl-3.4]="nvidia-cuda-cccl==13.3.4.3.1 nvidia/cu13/include/cccl"
  [cccl-3.5]="nvidia-cuda-cccl==13.3.5.0.6 nvidia/cu13/include/cccl"
)

for name in "${!wheels[@]}"; do
  read -r spec inner <<<"${wheels[$name]}"
  dest="$deps/$name"
  [[ -f "$dest/.done" ]] && continue
  echo "setup-cccl: fetching $spec"
  dl="$(mktemp -d)"
  python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$dl" "$spec"
  rm -rf "$dest" "$dl/x"
  python3 -m zipfile -e "$dl"/*.whl "$dl/x"
  mkdir -p "$dest"
  cp -r "$dl/x/$inner/." "$dest/"
  rm -rf "$dl"
  touch "$dest/.done"
done

# The runtime headers include "crt/host_defines.h", shipped in the crt wheel.
if [[ ! -e "$deps/runtime/crt" ]]; then
  cp -r "$deps/crt/crt" "$deps/runtime/crt"
fi
