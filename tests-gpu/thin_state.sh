#!/usr/bin/env bash
# Does a process's earlier work, or its place in the run, change what the thin resources'
# cells (cuda, cuda_async) read? bench-vs-rmm's harness runs rmm-rs's perf_anchor first, right
# after its build, and that process runs pool, binning and arena (each makes and frees a pool
# of half the device) before the thin cells; RMM's runs second and takes three times longer.
# This builds perf_anchor as the harness does, then runs in fresh processes, in a fixed order:
#   rs-full  rmm-rs, every resource   (the harness's process)
#   rs-thin  rmm-rs, cuda_async,cuda only
#   rmm-thin RMM 23.12, cuda_async,cuda only
#   rmm-full RMM 23.12, every resource (only while time is left: about 100 s)
# ORDER (default below) names the processes; WORKLOADS (w2,w1,w4). A sampler writes the GPU's
# clocks, power and used memory every 0.5 s to $OUT/smi.csv. Prints each process's thin cells
# with its start time.
#   OUT=$OUT bash tests-gpu/thin_state.sh    (carry .carry/bench-vs-rmm)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
C=$PWD/.carry/bench-vs-rmm
OUT=${OUT:-/tmp/thin-state}; mkdir -p "$OUT"
B=/tmp/pab-state
WORKLOADS=${WORKLOADS:-w2,w1,w4}
ORDER=${ORDER:-rs-full rmm-thin rs-thin rs-full rmm-thin rs-thin rs-full rmm-full}
DEADLINE=${DEADLINE:-480}
exec > >(tee "$OUT/thin_state.log") 2>&1
for d in /usr/local/cuda/bin /usr/local/cuda-*/bin; do [ -d "$d" ] && PATH="$PATH:$d"; done
nvidia-smi -q | grep -iE "persistence|product name|driver version|addressing mode|MIG mode" | head -8
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,memory.used,temperature.gpu \
  --format=csv,noheader -lms 500 >"$OUT/smi.csv" 2>&1 &
smi=$!
echo "== [$SECONDS s] build (as the harness)"
CARRY=$C BUILD=$B JOBS=16 bash "$C/harness/build.sh" >"$OUT/build.log" 2>&1 || echo "build: exit $?"
cat "$B/build-status.txt"
i=0
for p in $ORDER; do
  i=$((i + 1))
  if [ "$p" = rmm-full ] && [ $((DEADLINE - SECONDS)) -lt 120 ]; then echo "skip $p: no time"; continue; fi
  [ $((DEADLINE - SECONDS)) -lt 20 ] && { echo "skip $p: no time"; continue; }
  v=${p%%-*}; exe=$B/perf_anchor_rmm; [ "$v" = rs ] && exe=$B/perf_anchor_rmmrs
  res=pool,binning,arena,cuda_async,cuda; [ "${p#*-}" = thin ] && res=cuda_async,cuda
  echo "== [$SECONDS s] $i $p"
  RMM_RUNTIME=cuda timeout $((DEADLINE - SECONDS)) "$exe" --resources "$res" --workloads "$WORKLOADS" \
    --json "$OUT/p$i-$p.json" >/dev/null 2>"$OUT/p$i-$p.err" || echo "$p: exit $?"
done
kill $smi 2>/dev/null
echo "== [$SECONDS s] cells (ns per operation; runs_s per timed run)"
python3 - "$OUT" <<'PY'
import json, sys, glob, os, re
out = sys.argv[1]
files = sorted(glob.glob(f"{out}/p*.json"), key=lambda f: int(re.search(r"/p(\d+)-", f).group(1)))
for f in files:
    rows = json.load(open(f))["rows"]
    name = os.path.basename(f)[:-5]
    for r in rows:
        if r["resource"] in ("cuda", "cuda_async") and r.get("ns_per_op"):
            runs = " ".join(f"{x:.3f}" for x in r.get("runs_s", []))
            print(f"{name:<14} {r['resource']:<10} {r['workload']:<26} {r['ns_per_op']:>10.0f}  [{runs}]")
PY
