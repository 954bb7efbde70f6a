#!/usr/bin/env bash
# Puts what the GPU machine (no network) needs to run RMM's own suites of each supported
# release against rmm-rs into .carry/rmm-suites/ (gitignored):
#   <tag>/         RMM's C++ tests (tests/ of 25.02, cpp/tests/ later), the benchmark
#                  utilities they include, and the Python tests, from a git mirror of
#                  rapidsai/rmm
#   cccl-3.4.tar.xz  CCCL 3.4 headers (RMM 26.06's pin and main's; CUDA 13.0 has 3.0)
#   cccl-3.5.tar.xz  CCCL 3.5 headers (RMM 26.10's pin)
#
#   scripts/carry-rmm-suites.sh <rmm-git-dir> [tag...]   (default: 25.02, 25.10, 26.06, main)
set -euo pipefail
cd "$(dirname "$0")/.."
git_dir="${1:?git directory of a rapidsai/rmm mirror}"
shift
tags=("$@")
((${#tags[@]})) || tags=(v25.02.00 v25.10.00 v26.06.00 main)
out=.carry/rmm-suites
rm -rf "$out" && mkdir -p "$out"
for tag in "${tags[@]}"; do
  paths=()
  for p in tests benchmarks/utilities cpp/tests cpp/benchmarks/utilities python/rmm/rmm/tests; do
    if git --git-dir="$git_dir" cat-file -e "$tag:$p" 2>/dev/null; then paths+=("$p"); fi
  done
  mkdir -p "$out/$tag"
  git --git-dir="$git_dir" archive "$tag" "${paths[@]}" | tar -x -C "$out/$tag"
done
./scripts/setup-cccl.sh
tar -cJf "$out/cccl-3.4.tar.xz" -C .deps/cuda cccl-3.4
tar -cJf "$out/cccl-3.5.tar.xz" -C .deps/cuda cccl-3.5
du -sh "$out"
