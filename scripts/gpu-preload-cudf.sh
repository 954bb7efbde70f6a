#!/usr/bin/env bash
# cuDF 26.10 (RAPIDS's wheels: cudf-cu13, pylibcudf-cu13, libcudf-cu13, which link the CUDA
# runtime statically) raw and under the LD_PRELOAD interposer, on a GPU machine with no
# network. What it needs is too big to send at once (64 MiB), so it comes in two folders and
# two runs, one after the other on the same machine, from the repo root:
#
#   scripts/gpu-preload-cudf.sh stage-a   (carry .carry/cudfA)
#       copies .carry/cudfA to /tmp/cudf-parts/A (the next run's files replace the working
#       tree, so part A has to leave it) and prints what the machine has (pip show).
#   scripts/gpu-preload-cudf.sh run       (carry .carry/cudfB .carry/rapids .carry/lib)
#       joins libcudf.so (xz, split in two; sha256-checked), installs every wheel of
#       .carry/cudfA, .carry/cudfB and .carry/rapids with pip --no-index --no-deps into
#       $CUDF_SITE (pandas 3.0.6 only where the machine's pandas is not 3.0.x, as cudf pins),
#       puts libcudf.so into $CUDF_SITE/libcudf/lib64/, then:
#   import  `import cudf, pylibcudf` and a tiny sum, raw and with LD_PRELOAD=$LIB.
#   bench   tests/gpu/cudf_workload.py (10^7 rows: groupby, merge, sort_values) in three
#           configurations, ROUNDS rounds, the order rotating each round: raw-default (RAPIDS's
#           default resource), raw-pool (rmm.reinitialize(pool_allocator=True)), pre-default
#           (interposed, default resource); every run's step times, the medians, the check
#           that every digest line is identical, and the interposer's RMM_PRELOAD_STATS=1
#           block of the first interposed run.
#   pytest  pylibcudf's own test_copying.py, test_reduce.py, test_column_from_iterable.py
#           (rapidsai/cudf v26.10.00a, .carry/cudfA/tests), raw and interposed: both summaries.
#
# The folders are made here (with network) by scripts/carry-cudf-wheels.sh; their contents:
# .carry/cudfA/MANIFEST.txt, .carry/cudfB/MANIFEST.txt. libcudf.so and libnvcomp.so.5 are
# pruned to sm_90 (scripts/fatbin_prune.py): every other fatbin entry's payload is zeroed in
# place (headers kept), so they run on an H100/H200 only.
# Python runs with a sitecustomize.py that gives numpy back numpy.row_stack where it lacks it
# (see "row_stack" below): nothing else differs from a plain run.
# env: PY (default /opt/torch/.venv/bin/python3); RMM_PRELOAD_LIB (default
# .carry/lib/librmm_preload.so); CUDF_SITE (default /tmp/cudf-site, made afresh); ROWS
# (default 10000000); ROUNDS (default 3); PRELOAD_ENV (more VAR=value words for the
# interposed runs); BUDGET (seconds for `run`, default 500: steps get the time that is left,
# pytest keeps 2 x PYTEST_TIMEOUT, default 90); OUT (logs, else /tmp/cudf-preload-logs).
# Last line: "gpu-preload-cudf: rc=N".
set -uo pipefail
cd "$(dirname "$0")/.."
PY="${PY:-/opt/torch/.venv/bin/python3}"
LIB="${RMM_PRELOAD_LIB:-$PWD/.carry/lib/librmm_preload.so}"
SITE="${CUDF_SITE:-/tmp/cudf-site}"
PARTS=/tmp/cudf-parts
ROWS="${ROWS:-10000000}"
ROUNDS="${ROUNDS:-3}"
BUDGET="${BUDGET:-500}"
PYTEST_TIMEOUT="${PYTEST_TIMEOUT:-90}"
read -r -a preload_env <<<"LD_PRELOAD=$LIB RMM_PRELOAD_STATS=1 ${PRELOAD_ENV:-}"
raw_env=(RMM_PRELOAD_UNUSED=1)
logs="${OUT:-/tmp/cudf-preload-logs}"
mkdir -p "$logs"
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
fail=0
what="${1:-}"

left() { echo $((BUDGET - SECONDS)); }
# a step's timeout: at most $1 seconds, and never past the budget less $2 seconds kept back
cap() { local l=$(($(left) - ${2:-0})); ((l < $1)) && echo $((l > 5 ? l : 5)) || echo "$1"; }

machine_info() {
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
  echo "python: $("$PY" --version 2>&1) ($PY); $(uname -m); xz: $(command -v xz || echo none)"
  "$PY" -m pip list --disable-pip-version-check 2>/dev/null |
    grep -iE '^(pandas|numpy|numba|numba-cuda|cupy-cuda13x|pyarrow|cuda-bindings|cuda-pathfinder|cuda-core|cuda-toolkit|nvidia-nvjitlink|nvidia-cuda-nvrtc|nvidia-cufile|pytest|fsspec|rich|packaging|nvtx|cachetools) ' |
    awk '{printf "%s %s; ", $1, $2} END {print ""}'
  ls -d /usr/local/cuda/lib64/libnvJitLink.so.* 2>/dev/null | tr '\n' ' '; echo
}

if [ "$what" = stage-a ]; then
  [ -d .carry/cudfA ] || { echo "no .carry/cudfA here: send it with this run"; exit 2; }
  rm -rf "$PARTS"
  mkdir -p "$PARTS"
  cp -r .carry/cudfA "$PARTS/A" || exit 1
  (cd "$PARTS/A" && grep ' libcudf.sm90only.so.xz.part0$' SHA256SUMS | sha256sum -c --quiet) ||
    { echo "part0 checksum differs"; exit 1; }
  echo "stage-a: $(du -sh "$PARTS/A" | cut -f1) in $PARTS/A; now run 'scripts/gpu-preload-cudf.sh run' (with .carry/cudfB .carry/rapids .carry/lib)"
  machine_info
  echo "gpu-preload-cudf: rc=0"
  exit 0
elif [ "$what" != run ]; then
  echo "usage: $0 stage-a|run"; exit 2
fi

# ---- run: join, install
[ -d "$PARTS/A" ] || { echo "no $PARTS/A: run '$0 stage-a' (with .carry/cudfA) first on this same machine"; exit 2; }
[ -d .carry/cudfB ] || { echo "no .carry/cudfB here: send it with this run"; exit 2; }
[ -f "$LIB" ] || { echo "missing $LIB (carry .carry/lib from scripts/make-carry.sh)"; exit 2; }
ls .carry/rapids/rmm_cu13-*.whl .carry/rapids/librmm_cu13-*.whl .carry/rapids/rapids_logger-*.whl >/dev/null 2>&1 ||
  { echo "no RAPIDS wheels in .carry/rapids (carry it)"; exit 2; }
machine_info
echo "interposer: $LIB"
rm -rf "$PARTS/B"
cp -r .carry/cudfB "$PARTS/B" || exit 1
cat "$PARTS/A/libcudf.sm90only.so.xz.part0" "$PARTS/B/libcudf.sm90only.so.xz.part1" >"$PARTS/libcudf.sm90only.so.xz"
(cd "$PARTS" && grep ' libcudf.sm90only.so.xz$' A/SHA256SUMS | sha256sum -c --quiet) ||
  { echo "joined libcudf.sm90only.so.xz: checksum differs"; exit 1; }

pyver="$("$PY" -c 'import pandas; print(pandas.__version__)' 2>/dev/null)"
whls=("$PARTS"/A/*.whl "$PARTS"/B/*.whl .carry/rapids/*.whl)
case "$pyver" in
  3.0.*) echo "pandas $pyver on the machine satisfies cudf's pin (>=3.0,<3.1): not installing the carried one"
         whls=($(printf '%s\n' "${whls[@]}" | grep -v '/pandas-')) ;;
  *) echo "pandas on the machine: ${pyver:-none}; cudf pins >=3.0,<3.1: installing the carried pandas 3.0.6" ;;
esac
rm -rf "$SITE"
"$PY" -m pip install -q --disable-pip-version-check --no-index --no-deps --no-compile \
  --target "$SITE" "${whls[@]}" >"$logs/install.log" 2>&1 ||
  { tail -5 "$logs/install.log"; echo "pip install failed"; exit 2; }
mkdir -p "$SITE/libcudf/lib64"
if command -v xz >/dev/null; then
  xz -dc -T0 "$PARTS/libcudf.sm90only.so.xz" >"$SITE/libcudf/lib64/libcudf.so"
else
  "$PY" -c 'import lzma, shutil, sys
with lzma.open(sys.argv[1]) as f, open(sys.argv[2], "wb") as o: shutil.copyfileobj(f, o, 1 << 24)' \
    "$PARTS/libcudf.sm90only.so.xz" "$SITE/libcudf/lib64/libcudf.so"
fi
(cd "$SITE/libcudf/lib64" && grep ' libcudf.so$' "$PARTS/A/SHA256SUMS" | sha256sum -c --quiet) ||
  { echo "libcudf.so: checksum differs"; exit 1; }
rm -f "$PARTS/libcudf.sm90only.so.xz"
echo "installed into $SITE in $SECONDS s: $(ls "$SITE" | grep -c dist-info) distributions, libcudf.so $(stat -c %s "$SITE/libcudf/lib64/libcudf.so") bytes (sha256 ok)"
# numba-cuda 0.30.4, which the GPU machine has with numpy 2.5.2, still calls numpy.row_stack,
# which numpy 2.5 removed (an alias of numpy.vstack, deprecated since numpy 2.0); cudf imports
# numba-cuda when it loads, so `import cudf` fails there with an AttributeError. The
# sitecustomize.py below, in $SITE-shim first on PYTHONPATH, sets numpy.row_stack =
# numpy.vstack only when numpy lacks row_stack, and changes nothing else: it imports numpy at
# start-up (every Python here imports it anyway) and then runs the sitecustomize it shadows, if
# the machine's Python has one.
shim="$SITE-shim"
rm -rf "$shim" && mkdir -p "$shim"
cat >"$shim/sitecustomize.py" <<'PY'
# Written by scripts/gpu-preload-cudf.sh (see the comment there): numba-cuda 0.30.4 calls
# numpy.row_stack, which numpy 2.5 removed; give it back as numpy.vstack when it is missing.
try:
    import numpy
except ImportError:
    numpy = None
if numpy is not None and not hasattr(numpy, "row_stack"):
    numpy.row_stack = numpy.vstack


def _run_shadowed():
    import importlib.machinery, importlib.util, os, sys
    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is not None and spec.loader is not None:
        spec.loader.exec_module(importlib.util.module_from_spec(spec))


_run_shadowed()
del _run_shadowed
PY
export PYTHONPATH="$shim:$SITE${PYTHONPATH:+:$PYTHONPATH}"
echo "PYTHONPATH: $PYTHONPATH ($shim/sitecustomize.py: numpy.row_stack = numpy.vstack where missing)"

interposer_lines() {
  awk -v keep="${2:-1}" '/^rmm_preload statistics/ { p = 1; if (keep) print; next }
       p && /^  / { if (keep) print; next }
       { p = 0 }
       /^rmm_preload/ { if (keep) print; next }
       !keep { print }' "$1"
}
other_lines() { interposer_lines "$1" 0; }

# ---- import
import_code='
import os, sys
import cudf, pylibcudf as plc, pylibcudf._version as plcv, rmm, rmm.mr, nvidia.libnvcomp
so = sorted({l.split()[-1] for l in open("/proc/self/maps") if "libcudf.so" in l or "libnvJitLink" in l or "libnvrtc" in l})
print("cudf", cudf.__version__, cudf.__git_commit__[:10], "pylibcudf", plcv.__version__, "rmm", rmm.__version__)
print("loaded:", " ".join(so))
print("rmm resource:", type(rmm.mr.get_current_device_resource()).__name__)
s = cudf.Series(range(1000), dtype="int64")
c = plc.Column.from_iterable_of_py([1, 2, 3])
print("sum", int(s.sum()), "plc column size", c.size())
'
echo "== import: cudf and pylibcudf, raw then with LD_PRELOAD"
if ! timeout -k 10 "$(cap 120)" env "${raw_env[@]}" "$PY" -c "$import_code" >"$logs/import.log" 2>&1; then
  tail -6 "$logs/import.log"
  # should the RAPIDS loaders miss a library (say a machine's nvidia/__init__.py hiding
  # nvidia.libnvcomp), let the dynamic loader find them by path
  for d in libcudf/lib64 librmm/lib64 libkvikio/lib64 rapids_logger/lib64 nvidia/libnvcomp/lib64; do
    LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$SITE/$d"
  done
  export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:/usr/local/cuda/lib64"
  echo "import failed; retrying with the wheels' lib64 folders and /usr/local/cuda/lib64 on LD_LIBRARY_PATH"
  timeout -k 10 "$(cap 120)" env "${raw_env[@]}" "$PY" -c "$import_code" >"$logs/import.log" 2>&1 ||
    { tail -20 "$logs/import.log"; echo "import cudf fails raw"; echo "gpu-preload-cudf: rc=1"; exit 1; }
fi
echo "-- raw"; cat "$logs/import.log"
echo "-- ${preload_env[*]}"
timeout -k 10 "$(cap 120)" env "${preload_env[@]}" "$PY" -c "$import_code" >"$logs/import-preload.log" 2>&1 ||
  { echo "IMPORT UNDER LD_PRELOAD FAILED (rc=$?)"; fail=1; }
other_lines "$logs/import-preload.log"
interposer_lines "$logs/import-preload.log" | sed 's/^/    /'

# ---- bench
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print a[(NR + 1) / 2]; else printf "%.4f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
configs=(raw-default raw-pool pre-default)
declare -A times
digests=""
first_interposer=""
nruns=0
echo "== bench: tests/gpu/cudf_workload.py, $ROWS rows, $ROUNDS rounds of ${configs[*]}, the order rotating"
: >"$logs/bench.log"
for ((r = 0; r < ROUNDS; r++)); do
  for ((i = 0; i < 3; i++)); do
    cfg="${configs[$(((i + r) % 3))]}"
    t_out=$(cap 120 $((2 * PYTEST_TIMEOUT + 10)))
    if ((t_out <= 5)); then echo "bench: out of time budget, stopping"; break 2; fi
    case "$cfg" in
      raw-default) envw=("${raw_env[@]}"); mode=default ;;
      raw-pool) envw=("${raw_env[@]}"); mode=pool ;;
      pre-default) envw=("${preload_env[@]}"); mode=default ;;
    esac
    o="$(mktemp)" e="$(mktemp)"
    timeout -k 10 "$t_out" env "${envw[@]}" "$PY" tests/gpu/cudf_workload.py "$mode" "$ROWS" >"$o" 2>"$e"
    rc=$?
    { echo "### round $((r + 1)) $cfg rc=$rc"; cat "$o" "$e"; } >>"$logs/bench.log"
    if [ "$rc" != 0 ]; then
      echo "[$cfg] round $((r + 1)) FAILED rc=$rc"; other_lines "$e" | tail -6; fail=1
    else
      nruns=$((nruns + 1))
      digests+="$(grep '^digest' "$o")"$'\n'
      times[$cfg]+="$(awk '/^total/ {print $2}' "$e") "
      for s in build groupby merge sort; do times[$cfg.$s]+="$(awk -v s="$s" '$1 == "step" && $2 == s {print $3}' "$e") "; done
      ((r == 0)) && grep -E '^(cudf |rmm resource)' "$o" | sed "s/^/[$cfg] /"
      echo "round $((r + 1)) $cfg: $(awk '$1 == "step" {printf "%s %s  ", $2, $3} $1 == "total" {printf "| total %s", $2}' "$e")"
      if [ "$cfg" = pre-default ] && [ -z "$first_interposer" ]; then first_interposer="$(interposer_lines "$e")"; fi
    fi
    rm -f "$o" "$e"
  done
done
echo "medians (s):"
for cfg in "${configs[@]}"; do
  line="  $cfg: total $(tr ' ' '\n' <<<"${times[$cfg]:-}" | grep . | median)"
  for s in build groupby merge sort; do line+=", $s $(tr ' ' '\n' <<<"${times[$cfg.$s]:-}" | grep . | median)"; done
  echo "$line"
done
ndig="$(grep -c '^digest groupby ' <<<"$digests")"
if ((nruns > 0)) && [ "$ndig" = "$nruns" ] && [ "$(grep . <<<"$digests" | sort | uniq -c | awk -v n="$nruns" '$1 != n' | grep -c .)" = 0 ]; then
  echo "digests identical in all $nruns runs:"; sort -u <<<"$digests" | grep . | sed 's/^/    /'
else
  echo "DIGESTS DIFFER OR MISSING ($nruns runs):"; grep . <<<"$digests" | sort | uniq -c | sed 's/^/    /'; fail=1
fi
echo "interposer, first interposed run (RMM_PRELOAD_STATS=1):"
sed 's/^/    /' <<<"${first_interposer:-(no rmm_preload lines)}"

# ---- pytest
echo "== pytest: pylibcudf tests ($(cat "$PARTS/A/tests/TAG" 2>/dev/null)), raw then interposed"
work="$(mktemp -d /tmp/cudf-tests-XXXXXX)"
cp -r "$PARTS/A/tests" "$work/tests"
run_pytest() {
  local label="$1"; shift
  local log="$logs/pytest-$label.log" t0=$SECONDS rc summary
  (cd "$work/tests" && COLUMNS=250 timeout -s INT -k 20 "$(cap "$PYTEST_TIMEOUT")" env "$@" \
    "$PY" -m pytest -q -p no:cacheprovider -rfE test_copying.py test_reduce.py test_column_from_iterable.py) >"$log" 2>&1
  rc=$?
  summary="$(grep -E '[0-9]+ (passed|failed|errors?|skipped)|no tests ran' "$log" | tail -1)"
  echo "[$label] rc=$rc ($((SECONDS - t0)) s): ${summary:-no summary line (see $log)}"
  grep -q KeyboardInterrupt "$log" && echo "[$label] stopped at its time limit: the counts cover the tests run so far"
  grep -E '^(FAILED|ERROR) ' "$log" | sed 's/ - .*//' | sort -u >"$work/$label.failed"
  head -15 "$work/$label.failed" | sed "s/^/[$label]   /"
  [ "$label" = preload ] && interposer_lines "$log" | sed "s/^/[$label] /"
  return "$rc"
}
run_pytest raw "${raw_env[@]}"; rc_raw=$?
run_pytest preload "${preload_env[@]}"; rc_pre=$?
if cmp -s "$work/raw.failed" "$work/preload.failed"; then
  echo "pytest: same failing tests raw and interposed ($(grep -c . "$work/raw.failed") of them)"
else
  echo "pytest: the failing tests differ (< raw, > interposed):"; diff "$work/raw.failed" "$work/preload.failed" | grep '^[<>]'; fail=1
fi
[ "$rc_pre" = 0 ] || [ "$rc_pre" = "$rc_raw" ] || fail=1
rm -rf "$work"
echo "elapsed ${SECONDS} s; logs in $logs"
echo "gpu-preload-cudf: rc=$fail"
exit "$fail"
