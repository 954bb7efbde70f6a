#!/usr/bin/env bash
# Puts into .carry/cudfA/ and .carry/cudfB/ (git-ignored) what scripts/gpu-preload-cudf.sh needs
# on the GPU machine, which has no network: RAPIDS's cuDF 26.10.2 for CPython 3.12 on manylinux
# x86_64 and CUDA 13 (the wheels cudf-cu13, pylibcudf-cu13, libcudf-cu13, libkvikio-cu13,
# nvidia-libnvcomp-cu13 at the version libcudf-cu13 pins, nvtx, cachetools, pandas) and
# pylibcudf's own tests. Run it here, with network (none needed with --from holding every wheel),
# from anywhere in the checkout:
#
#   scripts/carry-cudf-wheels.sh [--from DIR] <cudf-git-dir> [TAG]
#
# <cudf-git-dir>: a rapidsai/cudf mirror's git directory (e.g. /work/.mirror/rapidsai+cudf/repo).
# TAG: where the tests come from (default v26.10.00a, the 26.10 tag the mirror has).
# --from DIR (or env WHEELS_DIR): wheels already downloaded (e.g. /tmp/cudf-probe); a wheel not
# there is looked for in .carry/.cudf-work/wheels/ and else downloaded there with
# `pip download --no-deps` (kept for the next run).
# env: PIP_PYTHON (the Python whose pip downloads: default a python3.12 if one runs, else
# python3); CUDF_VERSION (26.10.2), KVIKIO_VERSION (26.10.0), PANDAS_VERSION (3.0.6: cudf pins
# >=3.0,<3.1), NVTX_VERSION (0.2.17), CACHETOOLS_VERSION (8.0.3); KEEP_ARCH (90); XZ_PRESET
# (-9e; the folders of 2026-12-06 were made with -9, which XZ_PRESET=-9 reproduces bit for bit).
#
# A GPU machine without network gets at most 64 MiB at a time, and libcudf.so alone is 370 MB (its wheel 301 MB), so
# libcudf.so and libnvcomp.so.5 are pruned to sm_90 with scripts/fatbin_prune.py (every
# .nv_fatbin entry that is not an sm_90 ELF zeroed in place, headers kept, same size; checked
# with its verify), and so run on an H100/H200 only. The pruned libcudf.so is compressed with
# xz -9e -T0 (xz >= 5.4 then writes the multithreaded format, 192 MiB blocks, the same bytes
# whatever the core count) and split: the first 40 MiB in .carry/cudfA, the rest in
# .carry/cudfB, with SHA256SUMS (both parts, the joined .xz, the .so) in both. The libcudf-cu13
# wheel is rebuilt without it (gpu-preload-cudf.sh puts it into libcudf/lib64/), the
# nvidia-libnvcomp-cu13 one with the pruned libnvcomp.so.5 and without bin/ (the nvlzcat
# command line tool); both get a regenerated RECORD. Each folder must stay within 60 MiB.
# Work files: .carry/.cudf-work/build (removed at the end). Last lines: both MANIFEST.txt and
# the folders' sizes.
set -euo pipefail
cd "$(dirname "$0")/.."
from="${WHEELS_DIR:-}"
if [ "${1:-}" = --from ]; then from="${2:?--from needs a folder}"; shift 2; fi
git_dir="${1:?usage: carry-cudf-wheels.sh [--from DIR] <cudf-git-dir> [TAG]}"
tag="${2:-v26.10.00a}"
cudf_v="${CUDF_VERSION:-26.10.2}"
kvikio_v="${KVIKIO_VERSION:-26.10.0}"
pandas_v="${PANDAS_VERSION:-3.0.6}"
nvtx_v="${NVTX_VERSION:-0.2.17}"
cachetools_v="${CACHETOOLS_VERSION:-8.0.3}"
arch="${KEEP_ARCH:-90}"
xz_preset="${XZ_PRESET:--9e}"
outA=.carry/cudfA
outB=.carry/cudfB
work=.carry/.cudf-work
dl="$work/wheels"
build="$work/build"
tool=scripts/fatbin_prune.py
xzname="libcudf.sm${arch}only.so.xz"
split_at=$((40 * 1024 * 1024))
limit=$((60 * 1024 * 1024))
tests=(test_copying.py test_reduce.py test_column_from_iterable.py conftest.py common/utils.py)

if [ -z "${PIP_PYTHON:-}" ]; then
  PIP_PYTHON=python3
  python3.12 -c 'import pip' 2>/dev/null && PIP_PYTHON=python3.12
fi
python3 -c 'import sys, tomllib' 2>/dev/null || { echo "carry-cudf-wheels: needs python3 >= 3.11 (tomllib)" >&2; exit 1; }
git --git-dir="$git_dir" rev-parse -q --verify "$tag^{commit}" >/dev/null ||
  { echo "carry-cudf-wheels: no tag $tag in $git_dir" >&2; exit 1; }
rm -rf "$build"
mkdir -p "$dl" "$build"
trap 'rm -rf "$build"' EXIT

# wheel FILE-NAME SPEC: the path of the wheel FILE-NAME-*.whl (the name as wheel files spell it:
# lower case, '_' for '-'), from --from, else .carry/.cudf-work/wheels, else downloaded there.
platforms=()
for p in manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_24_x86_64 manylinux_2_17_x86_64 \
  manylinux2014_x86_64 manylinux1_x86_64 manylinux_2_31_x86_64 manylinux_2_34_x86_64 \
  manylinux_2_35_x86_64 linux_x86_64; do
  platforms+=(--platform "$p")
done
wheel() {
  local found=() d
  for d in ${from:+"$from"} "$dl"; do
    found=("$d/$1"-*.whl)
    [ -e "${found[0]}" ] && break
  done
  if [ ! -e "${found[0]}" ]; then
    echo "carry-cudf-wheels: downloading $2 with $("$PIP_PYTHON" --version)" >&2
    "$PIP_PYTHON" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
      --python-version 3.12 --implementation cp --abi cp312 "${platforms[@]}" -d "$dl" "$2" >&2
    found=("$dl/$1"-*.whl)
  fi
  [ -e "${found[0]}" ] && [ "${#found[@]}" = 1 ] ||
    { echo "carry-cudf-wheels: want one $1-*.whl, have: ${found[*]}" >&2; return 1; }
  echo "${found[0]}"
}

# extract WHEEL MEMBER OUT: one member, its sha256 checked against the wheel's RECORD
extract() {
  python3 - "$@" <<'PY'
import base64, csv, hashlib, io, re, sys, zipfile
whl, member, out = sys.argv[1:]
with zipfile.ZipFile(whl) as z:
    rec = next(n for n in z.namelist() if re.fullmatch(r"[^/]+\.dist-info/RECORD", n))
    row = next(r for r in csv.reader(io.StringIO(z.read(rec).decode())) if r and r[0] == member)
    data = z.read(member)
h = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
if h != row[1]:
    sys.exit(f"carry-cudf-wheels: {member} of {whl}: {h}, RECORD says {row[1]}")
open(out, "wb").write(data)
PY
}

libcudf_whl="$(wheel libcudf_cu13-"$cudf_v" "libcudf-cu13==$cudf_v")"
nvcomp_v="$(python3 - "$libcudf_whl" <<'PY'
import re, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    meta = z.read(next(n for n in z.namelist() if re.fullmatch(r"[^/]+\.dist-info/METADATA", n))).decode()
print(re.search(r"^Requires-Dist: nvidia-libnvcomp-cu13\s*==\s*([^\s;,]+)", meta, re.M).group(1))
PY
)"
nvcomp_whl="$(wheel nvidia_libnvcomp_cu13-"$nvcomp_v" "nvidia-libnvcomp-cu13==$nvcomp_v")"
cudf_whl="$(wheel cudf_cu13-"$cudf_v" "cudf-cu13==$cudf_v")"
pylibcudf_whl="$(wheel pylibcudf_cu13-"$cudf_v" "pylibcudf-cu13==$cudf_v")"
kvikio_whl="$(wheel libkvikio_cu13-"$kvikio_v" "libkvikio-cu13==$kvikio_v")"
pandas_whl="$(wheel pandas-"$pandas_v" "pandas==$pandas_v")"
nvtx_whl="$(wheel nvtx-"$nvtx_v" "nvtx==$nvtx_v")"
cachetools_whl="$(wheel cachetools-"$cachetools_v" "cachetools==$cachetools_v")"
echo "carry-cudf-wheels: cudf $cudf_v, nvidia-libnvcomp-cu13 $nvcomp_v (libcudf's pin); wheels from ${from:+$from and }$dl"

# prune, verify, rebuild the two wheels
extract "$libcudf_whl" libcudf/lib64/libcudf.so "$build/libcudf.so"
extract "$nvcomp_whl" nvidia/libnvcomp/lib64/libnvcomp.so.5 "$build/libnvcomp.so.5"
cudf_pruned="$(python3 "$tool" prune "$build/libcudf.so" "$build/libcudf.sm$arch.so" --keep-arch "$arch")"
echo "$cudf_pruned"
python3 "$tool" verify "$build/libcudf.so" "$build/libcudf.sm$arch.so" --keep-arch "$arch"
nvcomp_pruned="$(python3 "$tool" prune "$build/libnvcomp.so.5" "$build/libnvcomp.sm$arch.so" --keep-arch "$arch")"
echo "$nvcomp_pruned"
python3 "$tool" verify "$build/libnvcomp.so.5" "$build/libnvcomp.sm$arch.so" --keep-arch "$arch"
# prune's line as "KINDS: N of M entries, B bytes"
zeroed() { sed -n 's/.* zeroed \([0-9]* of [0-9]* entries\) (\([0-9]* bytes\)): \([^;]*\);.*/\3: \1, \2/p' <<<"$1"; }

rm -rf "$outA" "$outB"
mkdir -p "$outA/tests" "$outB"
python3 "$tool" rewheel "$libcudf_whl" "$outB/$(basename "$libcudf_whl")" --drop libcudf/lib64/libcudf.so
python3 "$tool" rewheel "$nvcomp_whl" "$outB/$(basename "$nvcomp_whl")" --drop nvidia/libnvcomp/bin/ \
  --replace "nvidia/libnvcomp/lib64/libnvcomp.so.5=$build/libnvcomp.sm$arch.so"
cp "$cudf_whl" "$pylibcudf_whl" "$kvikio_whl" "$pandas_whl" "$outB/"
cp "$nvtx_whl" "$cachetools_whl" "$outA/"

# libcudf.so: xz, split at 40 MiB
echo "carry-cudf-wheels: xz $xz_preset libcudf.so (a minute or more)"
mv "$build/libcudf.sm$arch.so" "$build/libcudf.so"
xz "$xz_preset" -T0 -c "$build/libcudf.so" >"$build/$xzname"
head -c "$split_at" "$build/$xzname" >"$build/$xzname.part0"
tail -c +$((split_at + 1)) "$build/$xzname" >"$build/$xzname.part1"
cp "$build/$xzname.part0" "$outA/"
cp "$build/$xzname.part1" "$outB/"
(cd "$build" && sha256sum "$xzname.part0" "$xzname.part1" "$xzname" libcudf.so) >"$outA/SHA256SUMS"
cp "$outA/SHA256SUMS" "$outB/SHA256SUMS"
so_size="$(stat -c %s "$build/libcudf.so")"

# pylibcudf's tests, and its pyproject's pytest options as pytest.ini
git --git-dir="$git_dir" archive "$tag" "${tests[@]/#/python/pylibcudf/tests/}" |
  tar -x -C "$outA/tests" --strip-components=3
tag_commit="$(git --git-dir="$git_dir" rev-parse "$tag^{commit}")"
head_commit="$(git --git-dir="$git_dir" rev-parse HEAD)"
head_name="$(git --git-dir="$git_dir" symbolic-ref -q --short HEAD || echo HEAD)"
if [ "$(git --git-dir="$git_dir" rev-parse "${tests[@]/#/$tag:python/pylibcudf/tests/}")" = \
  "$(git --git-dir="$git_dir" rev-parse "${tests[@]/#/HEAD:python/pylibcudf/tests/}" 2>/dev/null)" ]; then
  at_head="files identical at $head_name $head_commit (mirror's newest)"
else
  at_head="files differ at $head_name $head_commit (mirror's newest)"
fi
echo "rapidsai/cudf $tag ($tag_commit); $at_head" >"$outA/tests/TAG"
git --git-dir="$git_dir" show "$tag:python/pylibcudf/pyproject.toml" | TAG="$tag" python3 -c '
import os, sys, tomllib
opts = tomllib.loads(sys.stdin.read())["tool"]["pytest"]["ini_options"]
tag = os.environ["TAG"]
print(f"# [tool.pytest.ini_options] of python/pylibcudf/pyproject.toml at rapidsai/cudf {tag}")
print("[pytest]")
for k, v in opts.items():
    if isinstance(v, list):
        print(f"{k} =" + "".join(f"\n    {x}" for x in v))
    else:
        print(f"{k} = {str(v).lower() if isinstance(v, bool) else v}")
' >"$outA/tests/pytest.ini"

# MANIFEST.txt
title="cuDF $cudf_v for CPython 3.12 x86-64, CUDA 13, sm_$arch only"
wname() { basename "$1" .whl | cut -d- -f1-2; }
{
  echo "$title -- part A of 2 (scripts/gpu-preload-cudf.sh stage-a; made by scripts/carry-cudf-wheels.sh)"
  echo "  $xzname.part0  first 40 MiB of $xzname (part1 in $outB); sums in SHA256SUMS"
  echo "      libcudf.so of $(wname "$libcudf_whl") (PyPI wheel; RECORD sha256 checked), every .nv_fatbin entry"
  echo "      that is not an sm_$arch ELF zeroed in place ($(zeroed "$cudf_pruned")),"
  echo "      headers kept; same size ($so_size B); scripts/fatbin_prune.py verify checked it against the original"
  echo "  $(wname "$nvtx_whl") (cp312), $(wname "$cachetools_whl"): cudf needs them, the GPU machine lacks them"
  echo "  tests/  pylibcudf's ${tests[*]}"
  echo "          from rapidsai/cudf $tag; $at_head; pytest.ini = pyproject's ini options"
} >"$outA/MANIFEST.txt"
{
  echo "$title -- part B of 2 (scripts/gpu-preload-cudf.sh run; made by scripts/carry-cudf-wheels.sh)"
  echo "  $xzname.part1  rest of $xzname (see $outA/MANIFEST.txt)"
  echo "  $(wname "$libcudf_whl")          rebuilt without lib64/libcudf.so (RECORD regenerated); headers etc. as published"
  echo "  $(wname "$nvcomp_whl") rebuilt: libnvcomp.so.5 pruned to sm_$arch as above"
  echo "                                ($(zeroed "$nvcomp_pruned") zeroed),"
  echo "                                bin/ (nvlzcat CLI) dropped (RECORD regenerated)"
  echo "  $(wname "$pylibcudf_whl"), $(wname "$cudf_whl"), $(wname "$kvikio_whl"): as published"
  echo "  $(wname "$pandas_whl") (cp312): installed only if the machine's pandas is not 3.0.x (cudf pins >=3.0,<3.1)"
  cat <<'EOF'
not carried (on the GPU machine or not needed for import): rmm-cu13/librmm-cu13/rapids-logger (.carry/rapids),
  cupy-cuda13x, numba, numba-cuda, cuda-bindings, cuda-pathfinder, cuda-toolkit libs (nvrtc, nvJitLink, cufile),
  pyarrow, fsspec, packaging, rich; numba-cuda-mlir (only cudf's rolling/MLIR UDFs import it);
  nvidia-nvjitlink>=13.3 (libcudf dlopens libnvJitLink.so.13 and checks only the major version; the pin matters
  for JIT/LTO of UDFs only)
EOF
} >"$outB/MANIFEST.txt"

cat "$outA/MANIFEST.txt" "$outB/MANIFEST.txt"
status=0
for d in "$outA" "$outB"; do
  bytes="$(find "$d" -type f -printf '%s\n' | awk '{ s += $1 } END { print s }')"
  echo "$d: $bytes bytes ($(du -sh "$d" | cut -f1))"
  ((bytes <= limit)) || { echo "carry-cudf-wheels: $d is over 60 MiB" >&2; status=1; }
done
exit "$status"
