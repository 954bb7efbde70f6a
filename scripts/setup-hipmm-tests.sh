#!/usr/bin/env bash
# Fetches two of hipMM 4.0's own test programs (AMD's port of RMM 25.10 to HIP, which keeps
# RMM's CUDA spelling through rmm/cuda_runtime_api.h) into .deps/hipmm-4.0/, for the HIP
# header step of scripts/test.sh: cpp/tests/cuda_stream_tests.cpp and
# cpp/tests/cuda_stream_pool_tests.cpp, hipMM's CUDA_STREAM_TEST target. They are not part of
# this repository; they are fetched from GitHub at a pinned commit and checked against their
# SHA-256. Idempotent; prints nothing when they are there.
#
#   .deps/hipmm-4.0/cpp/tests/  the two files, as at the commit
#   .deps/hipmm-4.0/.done       the commit they came from
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/.deps/hipmm-4.0"

# A commit of hipMM 4.0's development (RMM 25.10's API) at which both files have their
# hipMM 4.0 content (RMM 25.10's stream-flag tests, with cudaStreamGetFlags).
commit=e91a99c30c30ff8918e127018d06d0797a5c8fb3
# Where the commit can be read (the first that answers serves; the checksums decide).
repos=(AMD-Ecosystem/hipMM ROCm/hipMM ROCm-DS/hipMM)
declare -A sha256=(
  [cpp/tests/cuda_stream_tests.cpp]=c88dc944750e642d31b69657c78cc2805862a920bd4b0e5954020b59a2b7a753
  [cpp/tests/cuda_stream_pool_tests.cpp]=d5d5029f12fa732730a7f1b459d03504da3040df9e29c05c8b4e2e4a7df51c39
)

[[ "$(cat "$dest/.done" 2>/dev/null || true)" == "$commit" ]] && exit 0

if ! command -v curl >/dev/null; then
  echo "setup-hipmm-tests: curl is needed (scripts/setup.sh test installs it)" >&2
  exit 1
fi
echo "setup-hipmm-tests: fetching hipMM's ${!sha256[*]} at $commit"
part="$dest.part"
rm -rf "$part"
for path in "${!sha256[@]}"; do
  mkdir -p "$part/$(dirname "$path")"
  fetched=""
  for repo in "${repos[@]}"; do
    url="https://raw.githubusercontent.com/$repo/$commit/$path"
    if curl -fsSL --retry 3 --connect-timeout 20 -o "$part/$path" "$url"; then
      fetched="$url"
      break
    fi
  done
  if [[ -z "$fetched" ]]; then
    echo "setup-hipmm-tests: $path at $commit could be read from none of: ${repos[*]}" >&2
    exit 1
  fi
  got="$(sha256sum "$part/$path" | cut -d' ' -f1)"
  if [[ "$got" != "${sha256[$path]}" ]]; then
    echo "setup-hipmm-tests: $fetched has SHA-256 $got, expected ${sha256[$path]}" >&2
    exit 1
  fi
done
echo "$commit" >"$part/.done"
rm -rf "$dest"
mv "$part" "$dest"
