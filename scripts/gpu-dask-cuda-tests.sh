#!/usr/bin/env bash
# Dask-CUDA's own RMM tests, unchanged, against the rmm-rs wheel, on a GPU machine with two
# GPUs and no network. Carried: .carry/wheel/ (the rmm-rs wheel) and .carry/dask-wheels/
# (scripts/carry-dask-wheels.sh: Dask-CUDA, whose wheel holds its tests, Dask, Distributed and
# what the machine's Python lacks). From the project root:
#
#   bash scripts/gpu-dask-cuda-tests.sh [pytest args...]
#
# Makes a virtual environment over the machine's Python ($PY, default
# /opt/torch/.venv/bin/python3, with CuPy, Numba, PyTorch, pandas, cuda-core, nvidia-ml-py,
# pytest): a venv of its base interpreter whose site-packages first holds the carried wheels
# and then reads $PY's site-packages through a .pth file. A venv, not PYTHONPATH, because
# the tests start `dask scheduler` and `dask cuda worker` from the environment's bin/
# (distributed.utils_test.popen) and rapids-dask-dependency patches Dask through a .pth file.
# Then runs, with RMM_RUNTIME=cuda, Dask-CUDA's tests that set up RMM in its workers:
# test_local_cuda_cluster.py (LocalCUDACluster(rmm_pool_size=..., rmm_managed_memory=...,
# rmm_async=..., rmm_track_allocations=..., rmm_log_directory=...)) and
# test_dask_cuda_worker.py (`dask cuda worker --rmm-pool-size ...` in its own process), the
# ones whose names say rmm and the others that pass RMM options (K below). With two GPUs each
# cluster has two workers, one per GPU, each setting up its own device's resource.
# Dask-CUDA's pytest settings (its pyproject.toml: DeprecationWarning and FutureWarning are
# errors, --tb=native) are written to a pytest.ini beside the tests.
#
# env: PY; VENV (default /tmp/dask-cuda-venv, made afresh); K (pytest -k expression; K=all runs
# both files whole); FILES (test files of dask_cuda/tests, default the two above);
# STRICT_WARNINGS=0 (warnings stay warnings); TIMEOUT_S (default 540, the whole pytest run);
# OUT (logs: $OUT/dask-cuda-tests.log). Last line: "gpu-dask-cuda-tests: rc=N".
set -uo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
PY=${PY:-/opt/torch/.venv/bin/python3}
VENV=${VENV:-/tmp/dask-cuda-venv}
K=${K:-"rmm or get_cluster_configuration or worker_fraction_limits or cudf_spill_warning"}
FILES=${FILES:-"test_local_cuda_cluster.py test_dask_cuda_worker.py"}
LOG=${OUT:-/tmp}/dask-cuda-tests.log
mkdir -p "$(dirname "$LOG")"

ls .carry/wheel/*.whl >/dev/null 2>&1 || { echo "no .carry/wheel/*.whl: carry the rmm-rs wheel" >&2; exit 2; }
ls .carry/dask-wheels/dask_cuda-*.whl >/dev/null 2>&1 ||
  { echo "no .carry/dask-wheels: run scripts/carry-dask-wheels.sh here first" >&2; exit 2; }
"$PY" -c 'import sys; assert sys.version_info[:2] == (3, 12), sys.version' ||
  { echo "$PY is not CPython 3.12, the Python of .carry/dask-wheels" >&2; exit 2; }

echo "== machine"
(nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader 2>&1 || true) | sed 's/^/  /'
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
[ "${ngpu:-0}" -ge 2 ] || echo "  warning: ${ngpu:-0} GPU(s) visible; these runs are meant for two"

echo "== venv $VENV over $PY"
rm -rf "$VENV"
"$PY" -m venv --without-pip "$VENV" || exit 2
vpy="$VENV/bin/python"
site_dir="$("$vpy" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')"
# $PY's own site-packages (it may itself be a venv: the new venv's base would not see them).
"$PY" -c 'import site, sysconfig
dirs = [sysconfig.get_path("purelib"), sysconfig.get_path("platlib")] + site.getsitepackages()
seen = []
for d in dirs:
    if d not in seen:
        seen.append(d)
print("import site; " + "; ".join(f"site.addsitedir({d!r})" for d in seen))' >"$site_dir/zz_machine_python.pth"
cat "$site_dir/zz_machine_python.pth" | sed 's/^/  /'
"$vpy" -m pip install -q --disable-pip-version-check --no-index --no-deps --no-compile \
  --ignore-installed --no-warn-script-location .carry/dask-wheels/*.whl .carry/wheel/*.whl || exit 2
"$vpy" - <<'EOF' || exit 2
import importlib.metadata as md, sys
import rmm, dask, distributed, dask_cuda
print("  python", sys.version.split()[0], "| rmm", rmm.__version__, "from", rmm.__file__)
for d in ("dask-cuda", "dask", "distributed", "rapids-dask-dependency", "numpy", "pandas",
          "cuda-core", "cuda-bindings", "nvidia-ml-py", "cupy-cuda13x", "numba", "numba-cuda",
          "torch", "pytest", "pytest-timeout"):
    try:
        print(f"  {d} {md.version(d)}")
    except md.PackageNotFoundError:
        print(f"  {d} (absent)")
EOF
[ -x "$VENV/bin/dask" ] || { echo "no $VENV/bin/dask: the tests start workers with it" >&2; exit 2; }

tests="$site_dir/dask_cuda/tests"
work="$(mktemp -d /tmp/dask-cuda-tests-XXXXXX)"
trap 'rm -rf "$work"' EXIT
cp -r "$tests" "$work/tests"  # a copy outside site-packages, with Dask-CUDA's pytest settings
{
  echo "[pytest]"
  echo "addopts = --tb=native"
  if [ "${STRICT_WARNINGS:-1}" != 0 ]; then
    echo "filterwarnings ="
    echo "    error::DeprecationWarning"
    echo "    error::FutureWarning"
    echo "    ignore:There is no current event loop:DeprecationWarning:tornado"
  fi
} >"$work/pytest.ini"

sel=()
[ "$K" = all ] || sel=(-k "$K")
files=()
for f in $FILES; do files+=("tests/$f"); done
echo "== pytest ${files[*]} ${sel[*]} (RMM_RUNTIME=${RMM_RUNTIME:-cuda})"
cd "$work"
RMM_RUNTIME=${RMM_RUNTIME:-cuda} DASK_CUDA_WAIT_WORKERS_MIN_TIMEOUT=20 PYTHONUNBUFFERED=1 \
  timeout -k 10 "${TIMEOUT_S:-540}" "$vpy" -m pytest -c "$work/pytest.ini" --rootdir "$work" \
  -p no:cacheprovider -v -rfEs "${files[@]}" "${sel[@]}" "$@" 2>&1 | tee "$LOG"
rc=${PIPESTATUS[0]}
echo "gpu-dask-cuda-tests: rc=$rc"
exit "$rc"
