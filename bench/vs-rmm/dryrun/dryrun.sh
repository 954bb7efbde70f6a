#!/usr/bin/env bash
# The whole bench/vs-rmm pipeline on a machine with no GPU: the stand-in runtime (setup.sh), then
# run.sh (QUICK=1 unless QUICK= is given) with every build, run, table and the figure, then
# checks of what came out. Its numbers mean nothing. RAPIDS's librmm.so carries its own CUDA
# runtime, linked statically, which needs NVIDIA's driver: the RMM 26.10 build is built and
# linked and started, and stops at its first call into librmm.so ("cannot reach a device"); the
# table code is then checked on the rmm-rs rows standing in for its column (a self-comparison,
# every ratio 1.00, in $OUT/selfcheck/, never in the run's own table).
#
# From the project root, after scripts/carry-vs-rmm.sh (and, for the 23.12 column,
# ../shared/bench-vs-rmm/prepare.sh):
#   bash bench/vs-rmm/dryrun/dryrun.sh
# env: D (the stand-in folder, /tmp/vs-rmm-dryrun), OUT (/tmp/vs-rmm-dryrun-out), QUICK (1),
# CUDA_HEADERS (for setup.sh), FIG_PYTHON (a Python with matplotlib, for the figure; default
# python3 when it has it, else the figure is not drawn).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
vsr="$(cd "$here/.." && pwd)"
root="$(cd "$vsr/../.." && pwd)"
D=${D:-/tmp/vs-rmm-dryrun}
OUT=${OUT:-/tmp/vs-rmm-dryrun-out}
BUILD=/tmp/vs-rmm-build
WORK=/tmp/vs-rmm-work
failed=0
check() { # what ok?
  if [ "$2" = 0 ]; then echo "  ok    $1"; else
    echo "  FAIL  $1"
    failed=1
  fi
}

bash "$here/setup.sh" "$D" || exit 1
rm -rf "$OUT"
DRYRUN=$D QUICK=${QUICK-1} OUT=$OUT BUILD_LIMIT=${BUILD_LIMIT:-900} TOTAL_S=${TOTAL_S:-1500} \
  bash "$vsr/run.sh" >/dev/null 2>&1
echo "== dry run: $OUT (run.log, comparison.md, vs_rmm.json)"

echo "-- builds"
# The two expected failures: RMM 26.06's file as it is against RAPIDS 26.10 (whose headers no
# longer include rmm/cuda_stream_view.hpp for it: the copy with that include is timed), and the
# 23.12 harness's own compile check of RMM 23.12's file against rmm-rs.
expected="random_allocations_asis_rapids.o bvr/random_allocations_rmmrs.o"
while read -r t s; do
  if [[ $t == *-source ]]; then
    echo "  note  ${t%-source} built from RMM's file: $s"
  elif [ "$s" = ok ]; then
    check "$t built" 0
  elif [[ " $expected " == *" $t "* ]]; then
    log=$BUILD/logs/$t.log
    [[ $t == bvr/* ]] && log=$BUILD/bvr/logs/$(basename "${t%.o}").log
    echo "  ok    $t failed, as expected: $(grep -m1 -o 'error: .*' "$log" | cut -c1-100 | iconv -f utf-8 -t utf-8 -c)"
  else check "$t built" 1; fi
done <"$BUILD/build-status.txt"

echo "-- every CUDA runtime function the programs call is the stand-in's"
have=$(objdump -T "$D/lib/libcudart.so.13" | awk '$NF ~ /^cuda/ {print $NF}' | sort -u)
for f in "$BUILD"/vs_rmm_bench_rapids "$BUILD"/vs_rmm_bench_rmmrs "$BUILD"/random_allocations_rapids \
  "$BUILD"/random_allocations_rmmrs "$BUILD"/bvr/perf_anchor_rmm "$BUILD"/bvr/random_allocations_rmm; do
  [ -x "$f" ] || continue
  need=$(nm -D --undefined-only "$f" | awk '{print $NF}' | sed 's/@.*//' | grep '^cuda' | sort -u)
  missing=$(comm -23 <(echo "$need") <(echo "$have") | xargs)
  check "$(basename "$f"): $(echo "$need" | wc -w) functions${missing:+, missing: $missing}" \
    "$([ -z "$missing" ] && echo 0 || echo 1)"
done
rapids_rt=$(nm -D --undefined-only "$BUILD/rapids/librmm/lib64/librmm.so" | grep -c ' cuda')
echo "  note  RAPIDS's librmm.so asks the dynamic linker for $rapids_rt CUDA runtime functions" \
  "(its runtime is linked in; it loads libcuda.so.1)"

echo "-- runs"
rows() { # variant-dir: rows, rows with an error
  python3 - "$WORK/json/$1" <<'PY'
import glob, json, sys
rows = []
errors = set()
for f in glob.glob(sys.argv[1] + "/*.json"):
    d = json.load(open(f))
    rows += d.get("rows", [])
    if "error" in d:
        errors.add(d["error"][:120])
bad = [r for r in rows if "error" in r]
print(len(rows), len(bad), "; ".join(sorted(errors)) or "-")
PY
}
read -r n bad err < <(rows rmmrs)
check "rmm-rs: $n cells, $bad with an error" "$([ "$n" -gt 40 ] && [ "$bad" = 0 ] && echo 0 || echo 1)"
if [ -d "$root/.carry/bench-vs-rmm" ]; then
  read -r n bad err < <(rows rmm2312)
  check "RMM 23.12 (perf_anchor): $n cells, $bad with an error" "$([ "$n" -gt 40 ] && [ "$bad" = 0 ] && echo 0 || echo 1)"
fi
read -r n bad err < <(rows rapids)
check "RMM 26.10: ran, stopped at its first call into librmm.so as expected off the GPU: $err" \
  "$([[ $err == *"cannot reach a device"* ]] && echo 0 || echo 1)"
gb=$(python3 - "$WORK/gbench" <<'PY'
import collections, glob, json, os, sys
n = collections.Counter()
for f in glob.glob(sys.argv[1] + "/*.json"):
    try:
        ok = any(not b.get("error_occurred") for b in json.load(open(f)).get("benchmarks", []))
    except ValueError:
        ok = False
    n[os.path.basename(f).split("__")[0]] += ok
print(", ".join(f"{k} {v}" for k, v in sorted(n.items())))
PY
)
check "RMM's random_allocations: cases timed per build: $gb" "$([[ $gb == *"rmmrs "[1-9]* ]] && echo 0 || echo 1)"

echo "-- tables and figure"
check "comparison.md and vs_rmm.json written" "$([ -s "$OUT/comparison.md" ] && [ -s "$OUT/vs_rmm.json" ] && echo 0 || echo 1)"
mkdir -p "$OUT/selfcheck"
python3 - "$OUT/vs_rmm.json" "$OUT/selfcheck/vs_rmm.json" <<'PY'
import copy, json, sys
doc = json.load(open(sys.argv[1]))
v = doc["variants"]
v["rmm-26.10"] = copy.deepcopy(v["rmm-rs"])
v["rmm-26.10"]["meta"]["variant"] = "rmm-26.10"
doc["gbench"] += [dict(g, variant="rmm-26.10") for g in doc["gbench"] if g["variant"] == "rmm-rs"]
doc["notes"] = ["SELF-CHECK of the table code: the rmm-rs rows stand in for RMM 26.10's"]
json.dump(doc, open(sys.argv[2], "w"), indent=1)
PY
python3 "$vsr/compare.py" --from "$OUT/selfcheck/vs_rmm.json" >"$OUT/selfcheck/comparison.md"
bad=$(python3 - "$OUT/selfcheck/comparison.md" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
summary = text.split("## Summary")[1].split("\n## ")[0]
rows = [line for line in summary.splitlines() if line.startswith("| W")]
vals = [c.strip().split(" ")[0] for line in rows for c in line.strip().strip("|").split("|")[1:]]
if not rows:
    vals = ["no rows"]
print(sum(1 for x in vals if x not in ("1.00", "—")))
PY
)
check "table self-check: every rmm-rs ÷ RMM 26.10 ratio of the summary is 1.00 ($OUT/selfcheck/)" "$bad"
python3 "$root/bench/figure.py" table --all "$OUT/selfcheck" >"$OUT/selfcheck/readme-table.md"
check "figure.py table (README's table) from vs_rmm.json" $?
FIG_PYTHON=${FIG_PYTHON:-python3}
if "$FIG_PYTHON" -c 'import matplotlib' 2>/dev/null; then
  "$FIG_PYTHON" "$root/bench/figure.py" -o "$OUT/vs-rmm-ratios.svg" "$OUT" "$OUT/selfcheck" >/dev/null
  check "figure.py draws the figure from vs_rmm.json ($OUT/vs-rmm-ratios.svg)" $?
else
  echo "  skip  the figure: no matplotlib for $FIG_PYTHON (FIG_PYTHON=a Python that has it)"
fi
[ $failed = 0 ] && echo "== dry run: every check passed" || echo "== dry run: a check FAILED"
exit $failed
