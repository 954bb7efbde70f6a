#!/usr/bin/env bash
# The thin resources (cuda_async, cuda) side by side in fresh processes, alternating RMM
# 23.12 and rmm-rs, REPS times (which goes first rotates from one rep to the next): one
# harness run gives one process per side, and a process's speed for these cells varies by
# up to 2x (tests-gpu/async_affinity.sh). With PRELOADED=1, a third variant runs RMM's build
# with librmm.so preloaded but unused (does loading the library slow the runtime's calls?);
# the order rotates, so each variant goes first, second and third equally often.
# Needs the perf_anchor builds of a bench-vs-rmm run on the same machine (BUILD, default
# /tmp/perf-anchor-build). Prints ns per operation per process and the medians.
# CPUS=list pins every process to those CPUs (taskset -c): some of the machine's CPUs are
# up to 2x slower than others at times (tests-gpu/bench_alternate.sh, docs/gpu-runs.md), and
# giving both builds the same CPUs makes that common to both sides.
set -uo pipefail
B=${BUILD:-/tmp/perf-anchor-build}
REPS=${REPS:-5}
RES=${RES:-cuda_async,cuda}
WORKLOADS=${WORKLOADS:-w2,w1,w4}
variants="rmm rmmrs"; [ -n "${PRELOADED:-}" ] && variants="rmm rmmrs rmm+librmm"
lib=$(ldd "$B/perf_anchor_rmmrs" | awk '/librmm.so/ {print $3}')
# DEADLINE=S: no rep starts after S seconds (the reps done are summarised).
read -ra vs <<<"$variants"
for r in $(seq "$REPS"); do
  if [ -n "${DEADLINE:-}" ] && [ "$SECONDS" -ge "$DEADLINE" ]; then REPS=$((r - 1)); break; fi
  # Rep r starts with variant r-1 (mod the count) and goes round: each goes first as often.
  order=""; for k in $(seq 0 $((${#vs[@]} - 1))); do order+="${vs[$(((r - 1 + k) % ${#vs[@]}))]} "; done
  for v in $order; do
    exe=$B/perf_anchor_${v%%+*}; pre=(); [ "$v" = rmm+librmm ] && pre=(LD_PRELOAD="$lib")
    pin=(); [ -n "${CPUS:-}" ] && pin=(taskset -c "$CPUS")
    env "${pre[@]}" RMM_RUNTIME=cuda "${pin[@]}" "$exe" --resources "$RES" --workloads "$WORKLOADS" --json "/tmp/thin_${v}_$r.json" >/dev/null 2>&1 || echo "$v run $r failed"
  done
done
python3 - "$REPS" "${vs[@]}" <<'PY'
import json, sys, statistics as st
reps, variants = int(sys.argv[1]), sys.argv[2:]; cells = {}
for v in variants:
    for r in range(1, reps + 1):
        try: rows = json.load(open(f"/tmp/thin_{v}_{r}.json"))["rows"]
        except Exception: continue
        for x in rows:
            if "ns_per_op" in x and x["ns_per_op"]:
                cells.setdefault((x["resource"], x["workload"]), {}).setdefault(v, []).append(x["ns_per_op"])
print(f"{'cell':<40} " + " ".join(f"{v+' runs':<48}" for v in variants) + " median ratios to RMM")
for k, d in sorted(cells.items()):
    a = d.get("rmm", [])
    if not a: continue
    runs = " ".join(f"{' '.join(f'{x:.0f}' for x in d.get(v, [])):<48}" for v in variants)
    ratios = " ".join(f"{v}: {st.median(d[v])/st.median(a):.2f}" for v in variants[1:] if d.get(v))
    print(f"{k[0]+' '+k[1]:<40} {runs} {ratios}")
PY
