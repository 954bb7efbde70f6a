#!/usr/bin/env bash
# The Python package on a GPU machine (device tool), from the project root, with the wheel
# built here carried in .carry/wheel/:
#   bash tests/gpu/python/run-gpu.sh [PYTHON]
# Installs the wheel into /tmp/rmmpy (no network: --no-deps --no-index), then runs pytest
# with RMM_RUNTIME=cuda, Numba kernels (plain, through NUMBA_CUDA_MEMORY_MANAGER and through
# set_memory_manager), the smoke test (DeviceBuffer, CuPy, Numba, PyTorch) and the PyTorch
# timing table. Logs go to $OUT when set.
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
PY=${1:-${PY:-/opt/torch/.venv/bin/python3}}
OUT=${OUT:-/tmp/rmm-python-gpu}
mkdir -p "$OUT"
rm -rf /tmp/rmmpy
"$PY" -m pip install -q --no-deps --no-index --target /tmp/rmmpy "$root"/.carry/wheel/*.whl || exit 1
export PYTHONPATH=/tmp/rmmpy RMM_RUNTIME=cuda
cd /tmp  # never import the source tree's rmm/
fail=0
step() { echo "==== $*"; "$@" 2>&1 | tee -a "$OUT/python-gpu.log" | tail -40; local rc=${PIPESTATUS[0]}; echo "==== rc=$rc"; [ "$rc" = 0 ] || fail=1; }
"$PY" -c 'import numpy, sys; print(sys.version); print("numpy", numpy.__version__)'
step "$PY" -m pytest -q -p no:cacheprovider "$root/python/tests" -x -q
step "$PY" "$root/tests/gpu/python/numba_kernels.py" --plain
NUMBA_CUDA_MEMORY_MANAGER=rmm.allocators.numba step "$PY" "$root/tests/gpu/python/numba_kernels.py"
step "$PY" "$root/tests/gpu/python/numba_kernels.py" --set
step "$PY" "$root/tests/gpu/python/gpu_smoke.py"
step "$PY" "$root/bench/torch_timing.py" table "${TORCH_RUNS:-5}"
exit $fail
