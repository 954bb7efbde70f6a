#!/usr/bin/env bash
# RAPIDS's own RMM Python package (rmm-cu13/librmm-cu13, not rmm-rs) under the LD_PRELOAD
# interposer, on a GPU machine with no network. Carried: .carry/rapids/
# (scripts/carry-rapids-wheels.sh: the wheels and RMM's own Python tests, rmm-tests/) and
# the interposer (.carry/lib/librmm_preload.so, scripts/make-carry.sh). From the repo root:
#
#   scripts/gpu-preload-rapids.sh [import|suite|cupy|all]...     (default all)
#
#  import  `import rmm` and one DeviceBuffer, without and with LD_PRELOAD; which CUDA symbols
#          librmm.so imports dynamically (librmm-cu13 links cudart statically, so its
#          cudaMalloc is no dynamic symbol an LD_PRELOAD can replace).
#  suite   RMM's own tests (.carry/rapids/rmm-tests, pytest, all of them) twice: raw, then with
#          LD_PRELOAD=$LIB RMM_PRELOAD_STATS=1; each run's summary line, its FAILED/ERROR lines,
#          whether both runs failed the same tests, and the interposer's statistics blocks.
#          About 2 x SUITE_TIMEOUT at most (240 s each by default).
#  cupy    tests/gpu/rapids_cupy_workload.py (CuPy through rmm_cupy_allocator, RAPIDS's default
#          CudaMemoryResource), raw and preloaded, alternating which goes first, ROUNDS times
#          each: every timing, the medians, their ratio, and the check that every checksum line
#          is identical; then (CONTROL=1) one raw and one preloaded run with CuPy's own
#          unpooled cudaMalloc (allocator cupy-raw), showing whether the interposer is in the
#          path at all.
# Several parts may be named: `scripts/gpu-preload-rapids.sh import cupy`.
# env: PY (default /opt/torch/.venv/bin/python3); RMM_PRELOAD_LIB (default
# .carry/lib/librmm_preload.so); RAPIDS_SITE (where the wheels go, default /tmp/rapids-site,
# made afresh); ITER (workload iterations, default 1000); ROUNDS (default 5); CONTROL (1);
# SUITE_TIMEOUT (seconds per pytest run, default 240; at the limit pytest gets SIGINT, prints
# its summary and exits, so the interposer still prints its statistics); PRELOAD_ENV (more
# VAR=value words for the preloaded runs, e.g. "RMM_PRELOAD_SYNC=device"); OUT (logs go to
# $OUT, else /tmp/rapids-preload-logs). Last line: "gpu-preload-rapids: rc=N".
set -uo pipefail
cd "$(dirname "$0")/.."
PY="${PY:-/opt/torch/.venv/bin/python3}"
LIB="${RMM_PRELOAD_LIB:-$PWD/.carry/lib/librmm_preload.so}"
SITE="${RAPIDS_SITE:-/tmp/rapids-site}"
ITER="${ITER:-${ITERS:-1000}}"
ROUNDS="${ROUNDS:-5}"
CONTROL="${CONTROL:-1}"
SUITE_TIMEOUT="${SUITE_TIMEOUT:-240}"
read -r -a preload_env <<<"LD_PRELOAD=$LIB RMM_PRELOAD_STATS=1 ${PRELOAD_ENV:-}"
logs="${OUT:-/tmp/rapids-preload-logs}"
mkdir -p "$logs"
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
parts=("$@")
((${#parts[@]})) || parts=(all)
fail=0

[ -f "$LIB" ] || { echo "missing $LIB (carry .carry/lib from scripts/make-carry.sh)"; exit 2; }
ls .carry/rapids/rmm_cu13-*.whl .carry/rapids/librmm_cu13-*.whl >/dev/null 2>&1 ||
  { echo "no RAPIDS wheels in .carry/rapids (run scripts/carry-rapids-wheels.sh here, carry .carry)"; exit 2; }
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
echo "python: $("$PY" --version 2>&1) ($PY); interposer: $LIB"
[ -f .carry/rapids/MANIFEST.txt ] && head -1 .carry/rapids/MANIFEST.txt

rm -rf "$SITE"
"$PY" -m pip install -q --disable-pip-version-check --no-index --no-deps --no-compile \
  --target "$SITE" .carry/rapids/*.whl || { echo "pip install of .carry/rapids/*.whl failed"; exit 2; }
export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
# librmm-cu13 carries its CUDA runtime statically; should its import still miss a CUDA
# library, the system toolkit's come last on the search path.
if ! "$PY" -c 'import rmm' 2>"$logs/import-error.txt"; then
  tail -3 "$logs/import-error.txt"
  export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64"
  echo "import rmm failed; retrying with /usr/local/cuda/lib64 on LD_LIBRARY_PATH"
  "$PY" -c 'import rmm' || { echo "import rmm fails"; exit 1; }
fi
rm -f "$logs/import-error.txt"

# The interposer's lines: its messages and its statistics block (the header and the lines of
# two spaces after it); other_lines: the rest.
interposer_lines() {
  awk -v keep="${2:-1}" '/^rmm_preload statistics/ { p = 1; if (keep) print; next }
       p && /^  / { if (keep) print; next }
       { p = 0 }
       /^rmm_preload/ { if (keep) print; next }
       !keep { print }' "$1"
}
other_lines() { interposer_lines "$1" 0; }

part_import() {
  echo "== import: rmm with and without LD_PRELOAD"
  local code='
import rmm, rmm.mr
print("rmm", rmm.__version__, rmm.__git_commit__[:10], "from", rmm.__file__)
print("rmm resource:", type(rmm.mr.get_current_device_resource()).__name__)
b = rmm.DeviceBuffer(size=1 << 20)
print("DeviceBuffer", b.size, "bytes at", hex(b.ptr))
'
  local so
  so="$("$PY" -c 'import librmm, os; print(os.path.join(os.path.dirname(librmm.__file__), "lib64", "librmm.so"))')"
  if command -v nm >/dev/null && [ -f "$so" ]; then
    local imports
    imports="$(nm -D --undefined-only "$so" | awk '{print $2}' | grep -E '^cu' | tr '\n' ' ')"
    echo "librmm.so imports of CUDA symbols: ${imports:-none (static cudart: cudaMalloc is resolved inside librmm.so)}"
  fi
  echo "-- raw"
  "$PY" -c "$code" 2>&1 || fail=1
  echo "-- ${preload_env[*]}"
  env "${preload_env[@]}" "$PY" -c "$code" >"$logs/import-preload.log" 2>&1 || fail=1
  other_lines "$logs/import-preload.log"
  interposer_lines "$logs/import-preload.log" | sed 's/^/    /'
}

# One pytest run of RMM's suite in a copy outside any package tree. label, env words...
run_suite() {
  local label="$1"; shift
  local work log rc summary
  work="$(mktemp -d /tmp/rapids-suite-XXXXXX)"
  cp -r .carry/rapids/rmm-tests "$work/tests"
  log="$logs/suite-$label.log"
  local t0=$SECONDS
  (cd "$work/tests" && COLUMNS=250 timeout -s INT -k 30 "$SUITE_TIMEOUT" env "$@" \
    "$PY" -m pytest -q -p no:cacheprovider -rfE --tb=line .) >"$log" 2>&1
  rc=$?
  summary="$(grep -E '[0-9]+ (passed|failed|errors?|skipped)|no tests ran' "$log" | tail -1)"
  echo "[$label] rc=$rc ($((SECONDS - t0)) s): ${summary:-no summary line (see $log)}"
  if [ "$rc" = 124 ] || [ "$rc" = 137 ] || grep -q KeyboardInterrupt "$log"; then
    echo "[$label] stopped at the ${SUITE_TIMEOUT} s limit: the counts cover the tests run so far"
  fi
  grep -E '^(FAILED|ERROR) ' "$log" | sed 's/ - .*//' | sort -u >"$logs/suite-$label.failed"
  grep -E '^(FAILED|ERROR) ' "$log" | head -25 | sed "s/^/[$label]   /"
  interposer_lines "$log" | sed "s/^/[$label] /"
  rm -rf "$work"
  return "$rc"
}

part_suite() {
  echo "== suite: RMM's own Python tests ($(cat .carry/rapids/rmm-tests/TAG 2>/dev/null)), raw then preloaded"
  run_suite raw RMM_PRELOAD_UNUSED=1
  local rc_raw=$?
  run_suite preload "${preload_env[@]}"
  local rc_pre=$?
  if cmp -s "$logs/suite-raw.failed" "$logs/suite-preload.failed"; then
    echo "suite: same failing tests raw and preloaded ($(grep -c . "$logs/suite-raw.failed") of them)"
  else
    echo "suite: the failing tests differ (< raw, > preloaded):"
    diff "$logs/suite-raw.failed" "$logs/suite-preload.failed" | grep '^[<>]'
    fail=1
  fi
  [ "$rc_pre" = 0 ] || [ "$rc_pre" = "$rc_raw" ] || fail=1
  rm -f "$logs/suite-raw.failed" "$logs/suite-preload.failed"
}

median() { sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else printf "%.3f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# One workload run. label, allocator, env words... Prints the time; keeps stdout in $sums.
run_cupy() {
  local label="$1" alloc="$2"; shift 2
  local o e t
  o="$(mktemp)" e="$(mktemp)"
  if ! env "$@" "$PY" tests/gpu/rapids_cupy_workload.py "$ITER" "$alloc" >"$o" 2>"$e"; then
    echo "[$label] FAILED"; tail -5 "$e"; fail=1
  fi
  t="$(awk '/^time_per_iter_us/ {print $2}' "$e")"
  { echo "### $label $alloc"; cat "$o" "$e"; } >>"$logs/cupy.log"
  last_stdout="$(cat "$o")"
  last_time="${t:-nan}"
  last_interposer="$(interposer_lines "$e")"
  rm -f "$o" "$e"
}

part_cupy() {
  echo "== cupy: tests/gpu/rapids_cupy_workload.py $ITER iterations, $ROUNDS rounds, alternating"
  : >"$logs/cupy.log"
  local raw=() pre=() sums="" r shown=0
  for ((r = 1; r <= ROUNDS; r++)); do
    local order=(raw preload)
    ((r % 2)) || order=(preload raw)
    for which in "${order[@]}"; do
      if [ "$which" = raw ]; then
        run_cupy raw rmm RMM_PRELOAD_UNUSED=1
        raw+=("$last_time")
      else
        run_cupy preload rmm "${preload_env[@]}"
        pre+=("$last_time")
        if [ "$shown" = 0 ]; then shown=1; first_interposer="$last_interposer"; fi
      fi
      ((r == 1)) && [ "$which" = "${order[0]}" ] && grep -E '^(rmm |rmm resource|allocations)' <<<"$last_stdout"
      sums+="$(grep '^checksum' <<<"$last_stdout")"$'\n'
      echo "round $r $which: time_per_iter_us $last_time"
    done
  done
  local mr mp
  mr="$(printf '%s\n' "${raw[@]}" | median)" mp="$(printf '%s\n' "${pre[@]}" | median)"
  echo "median time_per_iter_us: raw $mr, preload $mp, preload/raw $(awk -v a="$mp" -v b="$mr" 'BEGIN { if (b > 0) printf "%.3f", a / b }')"
  echo "interposer, first preloaded run:"
  sed 's/^/    /' <<<"${first_interposer:-    (no rmm_preload lines)}"
  if [ "$(grep -c . <<<"$sums")" = $((2 * ROUNDS)) ] && [ "$(sort -u <<<"$sums" | grep -c .)" = 1 ]; then
    echo "checksums identical: $(head -1 <<<"$sums")"
  else
    echo "CHECKSUMS DIFFER OR MISSING:"; sort <<<"$sums" | uniq -c; fail=1
  fi
  if [ "$CONTROL" = 1 ]; then
    echo "-- control: CuPy's own unpooled cudaMalloc (allocator cupy-raw), once raw, once preloaded"
    run_cupy control-raw cupy-raw RMM_PRELOAD_UNUSED=1
    local c1="$last_time" s1
    s1="$(grep '^checksum' <<<"$last_stdout")"
    run_cupy control-preload cupy-raw "${preload_env[@]}"
    echo "control time_per_iter_us: raw $c1, preload $last_time"
    [ "$s1" = "$(grep '^checksum' <<<"$last_stdout")" ] || { echo "control checksums differ"; fail=1; }
    sed 's/^/    /' <<<"${last_interposer:-(no rmm_preload lines)}"
  fi
}

for p in "${parts[@]}"; do
  case "$p" in
    import) part_import ;;
    suite) part_suite ;;
    cupy) part_cupy ;;
    all) part_import; part_suite; part_cupy ;;
    *) echo "unknown part $p (import, suite, cupy, all)"; exit 2 ;;
  esac
done
echo "gpu-preload-rapids: rc=$fail"
exit "$fail"
