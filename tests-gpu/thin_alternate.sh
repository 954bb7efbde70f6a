#!/usr/bin/env bash
# The thin resources (cuda_async, cuda) side by side in fresh processes, alternating RMM
# 23.12 and rmm-rs, REPS times: one harness run gives one process per side, and a
# process's speed for these cells varies by ±20% (tests-gpu/async_affinity.sh). Needs the
# perf_anchor builds of a bench-vs-rmm run on the same machine (BUILD, default
# /tmp/perf-anchor-build). Prints ns per operation per process and the medians.
set -uo pipefail
B=${BUILD:-/tmp/perf-anchor-build}
REPS=${REPS:-5}
RES=${RES:-cuda_async,cuda}
for r in $(seq "$REPS"); do
  for v in rmm rmmrs; do
    env RMM_RUNTIME=cuda "$B/perf_anchor_$v" --resources "$RES" --workloads w2,w1,w4 --json "/tmp/thin_${v}_$r.json" >/dev/null 2>&1 || echo "$v run $r failed"
  done
done
python3 - "$REPS" <<'PY'
import json, sys, statistics as st
reps = int(sys.argv[1]); cells = {}
for v in ("rmm", "rmmrs"):
    for r in range(1, reps + 1):
        try: rows = json.load(open(f"/tmp/thin_{v}_{r}.json"))["rows"]
        except Exception: continue
        for x in rows:
            if "ns_per_op" in x:
                cells.setdefault((x["resource"], x["workload"]), {}).setdefault(v, []).append(x["ns_per_op"])
print(f"{'cell':<44} {'RMM runs':<40} {'rmm-rs runs':<40} median ratio")
for k, d in sorted(cells.items()):
    a, b = d.get("rmm", []), d.get("rmmrs", [])
    if a and b:
        print(f"{k[0]+' '+k[1]:<44} {' '.join(f'{x:.0f}' for x in a):<40} {' '.join(f'{x:.0f}' for x in b):<40} {st.median(b)/st.median(a):.2f}")
PY
