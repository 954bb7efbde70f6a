#!/usr/bin/env bash
# Puts into .carry/dask-wheels/ (git-ignored) what scripts/gpu-dask-cuda-tests.sh needs on the
# GPU machine, which has no network: the wheels of Dask-CUDA, Dask, Distributed,
# rapids-dask-dependency and every dependency of theirs that the GPU machine's Python
# (/opt/torch/.venv: CPython 3.12 with NumPy, pandas, CuPy, Numba, cuda-core, nvidia-ml-py,
# pytest, ...) does not have, for CPython 3.12 on manylinux x86_64. Dask-CUDA's own tests come
# inside its wheel (dask_cuda/tests/). Run it here, with network, after scripts/make-carry.sh
# (which empties .carry/):
#
#   scripts/carry-dask-wheels.sh [DASK_CUDA_VERSION]      (default 26.10.0)
#
# Dask-CUDA 26.10 needs no cuDF (only its cuDF tests import it; they skip without it) and
# pins Dask and Distributed through rapids-dask-dependency 26.10 (2026.7.1). Left out on
# purpose: the packages the GPU machine already has (ON_GPU below: carrying a second copy of
# NumPy or pandas would shadow the ones CuPy and PyTorch were built with), and Bokeh (only
# Distributed's dashboard uses it; without it the dashboard is off and the tests do not care).
# PIP_PYTHON: the Python whose pip downloads (default: a python3.12 if one runs, else python3;
# 3.12 keeps pip from adding what only older Pythons need, such as importlib_metadata).
# Last lines: MANIFEST.txt (what was kept) and the folder's size.
set -euo pipefail
cd "$(dirname "$0")/.."
version="${1:-${DASK_CUDA_VERSION:-26.10.0}}"
out=.carry/dask-wheels
dl="$(mktemp -d /tmp/dask-wheels-XXXXXX)"
trap 'rm -rf "$dl"' EXIT

if [ -z "${PIP_PYTHON:-}" ]; then
  PIP_PYTHON=python3
  python3.12 -c 'import pip' 2>/dev/null && PIP_PYTHON=python3.12
fi
"$PIP_PYTHON" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))' ||
  echo "carry-dask-wheels: $PIP_PYTHON is not CPython 3.12: pip evaluates markers such as" \
    "python_version < \"3.12\" for it, so a few wheels 3.12 does not need may come along" >&2
echo "carry-dask-wheels: dask-cuda $version, downloading with $("$PIP_PYTHON" --version) ($PIP_PYTHON)"

# The GPU image's packages (docs/gpu-runs.md; names normalized as in wheel file names).
ON_GPU="click cloudpickle contourpy cuda_bindings cuda_core cuda_pathfinder cuda_toolkit fsspec
iniconfig jinja2 markupsafe msgpack narwhals numpy nvidia_ml_py packaging pandas pillow pluggy
psutil pyarrow pygments pytest pytest_timeout python_dateutil pyyaml six sortedcontainers toolz
typing_extensions urllib3 zipp"
SKIP="bokeh xyzservices"

"$PIP_PYTHON" -m pip download -q --disable-pip-version-check --only-binary=:all: \
  --python-version 3.12 --implementation cp --abi cp312 \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  -d "$dl" "dask-cuda==$version"

rm -rf "$out" && mkdir -p "$out"
kept=() dropped=()
for w in "$dl"/*.whl; do
  f="$(basename "$w")"
  name="$(echo "${f%%-*}" | tr 'A-Z.-' 'a-z__')"
  if [[ " $(echo $ON_GPU) " == *" $name "* ]]; then
    dropped+=("$f (on the GPU machine)")
  elif [[ " $SKIP " == *" $name "* ]]; then
    dropped+=("$f (left out: dashboard only)")
  else
    cp "$w" "$out/" && kept+=("$f")
  fi
done

# What the tests cannot run without.
for need in dask_cuda dask- distributed rapids_dask_dependency tornado zict partd locket tblib; do
  ls "$out"/"$need"*.whl >/dev/null 2>&1 || { echo "carry-dask-wheels: no $need wheel in $out" >&2; exit 1; }
done
unzip -l "$out"/dask_cuda-*.whl | grep -q 'dask_cuda/tests/test_local_cuda_cluster.py' \
  || { echo "carry-dask-wheels: the dask-cuda wheel has no tests (dask_cuda/tests)" >&2; exit 1; }

{
  echo "dask-cuda $version for CPython 3.12, manylinux x86_64 ($(date -u +%Y-%m-%d))"
  echo "kept:"
  printf '  %s\n' "${kept[@]}"
  echo "not carried:"
  printf '  %s\n' "${dropped[@]}"
} >"$out/MANIFEST.txt"
cat "$out/MANIFEST.txt"
du -sh "$out"
