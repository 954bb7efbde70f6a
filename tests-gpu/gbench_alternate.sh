#!/usr/bin/env bash
# RMM's own random_allocations benchmark, RMM 23.12's build and ours (the patched one), in
# fresh processes that alternate which goes first, REPS rounds per case. bench-vs-rmm runs
# each case once per build, always RMM's process first and ours right after it (so ours
# starts while the driver may still be tearing down the previous process's 40 GiB pool):
# does that order, rather than the build, decide the cuda_async cells? Prints the real time
# per iteration of every process and the ratio of the medians (ours ÷ RMM's).
# Needs the builds of a bench-vs-rmm run on the same machine (BUILD, default
# /tmp/perf-anchor-build; `CARRY=.carry/bench-vs-rmm BUILD=/tmp/perf-anchor-build bash
# .carry/bench-vs-rmm/harness/build.sh` makes them without running anything).
#   CASES="cuda_async:10000:1 cuda_async:1000:64" REPS=4 bash tests-gpu/gbench_alternate.sh
set -uo pipefail
B=${BUILD:-/tmp/perf-anchor-build}
REPS=${REPS:-4}
CASES=${CASES:-cuda_async:10000:1 cuda_async:1000:64}
out=$(mktemp -d)
for c in $CASES; do
  IFS=: read -r r n m <<<"$c"
  for rep in $(seq "$REPS"); do
    order="rmm rmmrs_patched"; [ $((rep % 2)) = 0 ] && order="rmmrs_patched rmm"
    for v in $order; do
      env RMM_RUNTIME=cuda "$B/random_allocations_$v" -r "$r" -n "$n" -m "$m" \
        --benchmark_min_time=0.3s --benchmark_out="$out/${v}__${r}__${n}__${m}__$rep.json" \
        --benchmark_out_format=json >/dev/null 2>&1 || echo "$v $c round $rep failed"
    done
  done
done
python3 - "$out" $CASES <<'PY'
import glob, json, os, statistics as st, sys
out, cases = sys.argv[1], sys.argv[2:]
for c in cases:
    r, n, m = c.split(":")
    times = {}
    for v in ("rmm", "rmmrs_patched"):
        for f in sorted(glob.glob(os.path.join(out, f"{v}__{r}__{n}__{m}__*.json"))):
            rep = int(f.rsplit("__", 1)[1].split(".")[0])
            b = [x for x in json.load(open(f))["benchmarks"] if x.get("run_type") != "aggregate"]
            if b:
                ms = b[0]["real_time"] * {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b[0]["time_unit"]]
                times.setdefault(v, []).append((rep, ms))
    line = f"{r} N={n} max={m}MiB:"
    for v, xs in times.items():
        line += f"  {v} " + " ".join(f"r{rep}:{ms:.2f}" for rep, ms in sorted(xs))
    if len(times) == 2:
        a = st.median(ms for _, ms in times["rmm"])
        b = st.median(ms for _, ms in times["rmmrs_patched"])
        line += f"  medians {a:.2f} / {b:.2f} ms = {b / a:.2f}"
    print(line)
PY
