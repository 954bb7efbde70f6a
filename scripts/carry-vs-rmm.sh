#!/usr/bin/env bash
# Assembles what bench/vs-rmm/run.sh needs on the GPU machine (no internet there) into
# .carry/vs-rmm/ (gitignored). Nothing of RAPIDS, CCCL or google benchmark is tracked:
#   rapids/librmm_cu13-26.10.0-*.whl       RAPIDS's librmm 26.10: headers, the compiled librmm.so,
#                                          and CCCL 3.5.0 (include/rapids, what its CMake package
#                                          uses), unpacked by build.sh
#   rapids/rapids_logger-0.3.0-*.whl       its logger library
#   rmmrs/{include,lib/librmm.so,lib/cmake,lib/pkgconfig}
#                                          rmm-rs's installed prefix (librmm.so without debug
#                                          info; no librmm.a, no interposer)
#   rmm-26.06/benchmarks/random_allocations/random_allocations.cpp, utilities/cxxopts.hpp, LICENSE
#                                          RMM v26.06.00's own benchmark
#   benchmark-1.9.5/{include,src,LICENSE}  google benchmark v1.9.5 (what rapids-cmake 26.06 pins)
#   MANIFEST.txt                           where each part came from, its commit and checksum
# The harness itself (bench/vs-rmm/) travels with the working tree. The 23.12 column needs the
# 23.12 harness's carry folder too (.carry/bench-vs-rmm, made by ../shared/bench-vs-rmm/
# prepare.sh); carry both. Then on the GPU machine, from the project root:
#   OUT=$OUT bash bench/vs-rmm/run.sh
#
# env (defaults in brackets):
#   WHEELS         folder with the two wheels [.carry/rapids, else ../main/.carry/rapids]
#   RMMRS_PREFIX   an installed rmm-rs prefix [./install, else .carry/prefix (make-carry.sh)]
#   RMM_GIT        git mirror of rapidsai/rmm [../.mirror/rapidsai+rmm/repo]
#   GBENCH_GIT     git mirror of google/benchmark [../.mirror/google+benchmark/repo]
#   (the fetch tool makes the mirrors: github:rapidsai/rmm, github:google/benchmark)
#   CARRY          the output folder [.carry/vs-rmm]
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
CARRY=${CARRY:-$root/.carry/vs-rmm}
mirror=$(cd "$root/.." && pwd)/.mirror
RMM_GIT=${RMM_GIT:-$mirror/rapidsai+rmm/repo}
GBENCH_GIT=${GBENCH_GIT:-$mirror/google+benchmark/repo}
RMM_TAG=v26.06.00
GBENCH_TAG=v1.9.5
die() {
  echo "carry-vs-rmm: $*" >&2
  exit 1
}

if [ -z "${WHEELS:-}" ]; then
  for d in "$root/.carry/rapids" "$root/../main/.carry/rapids"; do
    compgen -G "$d/librmm_cu13-26.10.0-*.whl" >/dev/null && { WHEELS=$d; break; }
  done
fi
[ -n "${WHEELS:-}" ] || die "no librmm_cu13-26.10.0 wheel found (set WHEELS)"
if [ -z "${RMMRS_PREFIX:-}" ]; then
  for d in "$root/install" "$root/.carry/prefix"; do
    [ -f "$d/lib/librmm.so" ] && { RMMRS_PREFIX=$d; break; }
  done
fi
[ -n "${RMMRS_PREFIX:-}" ] && [ -f "$RMMRS_PREFIX/lib/librmm.so" ] && [ -d "$RMMRS_PREFIX/include/rmm" ] ||
  die "no rmm-rs prefix (lib/librmm.so, include/rmm): cmake --install a build, or set RMMRS_PREFIX"
for g in "$RMM_GIT" "$GBENCH_GIT"; do
  git -C "$g" rev-parse -q --verify HEAD >/dev/null 2>&1 || die "no git mirror at $g (the fetch tool makes it)"
done

rm -rf "$CARRY"
mkdir -p "$CARRY/rapids" "$CARRY/rmmrs/lib"
one() { # the one file matching a pattern
  local m
  m=$(compgen -G "$1") || die "nothing matches $1"
  [ "$(printf '%s\n' "$m" | wc -l)" = 1 ] || die "more than one file matches $1"
  echo "$m"
}
librmm_whl=$(one "$WHEELS/librmm_cu13-26.10.0-*.whl")
logger_whl=$(one "$WHEELS/rapids_logger-0.3.0-*.whl")
cp "$librmm_whl" "$logger_whl" "$CARRY/rapids/"

cp -r "$RMMRS_PREFIX/include" "$CARRY/rmmrs/"
cp -r "$RMMRS_PREFIX/lib/cmake" "$CARRY/rmmrs/lib/"
[ -d "$RMMRS_PREFIX/lib/pkgconfig" ] && cp -r "$RMMRS_PREFIX/lib/pkgconfig" "$CARRY/rmmrs/lib/"
strip --strip-debug -o "$CARRY/rmmrs/lib/librmm.so" "$RMMRS_PREFIX/lib/librmm.so"

# git archive TAG PATHS | tar -x into $CARRY/DEST, checked file by file.
extract() { # git tag dest strip-prefix paths...
  local git=$1 tag=$2 dest=$3 strip=$4
  shift 4
  mkdir -p "$CARRY/$dest"
  git -C "$git" archive --format=tar "$tag" "$@" |
    tar -x -C "$CARRY/$dest" ${strip:+--strip-components=$strip}
  local want got
  want=$(git -C "$git" ls-tree -r --name-only "$tag" "$@" | wc -l)
  got=$(find "$CARRY/$dest" -type f | wc -l)
  [ "$want" = "$got" ] || die "$git $tag: $got of $want files extracted for $*"
}
extract "$RMM_GIT" "$RMM_TAG" rmm-26.06 1 cpp/benchmarks/random_allocations/random_allocations.cpp \
  cpp/benchmarks/utilities/cxxopts.hpp
git -C "$RMM_GIT" show "$RMM_TAG:LICENSE" >"$CARRY/rmm-26.06/LICENSE"
extract "$GBENCH_GIT" "$GBENCH_TAG" benchmark-1.9.5 "" include src LICENSE

sha() { sha256sum "$1" | cut -d' ' -f1; }
{
  echo "bench/vs-rmm carry"
  echo "librmm   $(basename "$librmm_whl")  sha256 $(sha "$librmm_whl")"
  echo "         librmm GIT_COMMIT $(unzip -p "$librmm_whl" librmm/GIT_COMMIT 2>/dev/null ||
    python3 -c 'import sys, zipfile; print(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]).decode())' \
      "$librmm_whl" librmm/GIT_COMMIT)"
  echo "logger   $(basename "$logger_whl")  sha256 $(sha "$logger_whl")"
  echo "rmm      $RMM_TAG $(git -C "$RMM_GIT" rev-parse "$RMM_TAG^{commit}")  (rapidsai/rmm: random_allocations)"
  echo "gbench   $GBENCH_TAG $(git -C "$GBENCH_GIT" rev-parse "$GBENCH_TAG^{commit}")  (google/benchmark)"
  echo "rmm-rs   prefix $RMMRS_PREFIX; this carry made in the checkout at $(git -C "$root" rev-parse --short HEAD)"
  echo "         librmm.so sha256 as built $(sha "$RMMRS_PREFIX/lib/librmm.so"), carried $(sha "$CARRY/rmmrs/lib/librmm.so")"
  echo "size     $(du -sh "$CARRY" | cut -f1)"
} >"$CARRY/MANIFEST.txt"
cat "$CARRY/MANIFEST.txt"
kib=$(du -sk "$CARRY" | cut -f1)
[ "$kib" -lt $((40 * 1024)) ] || die "the carry folder is $kib KiB, over 40 MiB"
if [ -d "$root/.carry/bench-vs-rmm" ]; then
  echo "with the 23.12 column: carry .carry/vs-rmm and .carry/bench-vs-rmm ($(du -sh "$root/.carry/bench-vs-rmm" | cut -f1))"
else
  echo "no .carry/bench-vs-rmm: the run has no 23.12 column (../shared/bench-vs-rmm/prepare.sh makes it)"
fi
