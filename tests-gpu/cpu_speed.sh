#!/usr/bin/env bash
# How fast is each CPU of this machine, and does it stay so? Pool W2 (host runtime: CPU
# only) pinned to each CPU in turn, at the start and again at the end; in between, the same
# rmm-bench with RMM_RUNTIME=cuda pinned to the CPU that was fastest at the start and not
# pinned, alternating (W2, W1 N=10 000 and 100 000 for pool and binning), then W3 of both
# pinned to the eight CPUs that were fastest at the start and not pinned. Prints both probes
# and the medians per cell. Needs .carry/rmm-bench (scripts/make-carry.sh).
#   REPS=4 OUT=$OUT bash tests-gpu/cpu_speed.sh
set -u
root="$(cd "$(dirname "$0")/.." && pwd)"
bench=${BENCH:-$root/.carry/rmm-bench}
O=${OUT:-/tmp/cpu_speed}; mkdir -p "$O"
lscpu >"$O/lscpu.txt"
probe() {
  for c in $(seq 0 $(($(nproc) - 1))); do
    echo "$c $(RMM_RUNTIME=host RMM_HOST_DEVICE_MEMORY=80GiB taskset -c "$c" "$bench" \
      --resources pool --workloads w2 2>/dev/null | awk '/W2/ {print $7}')"
  done
}
probe >"$O/probe_start.txt"
echo "pool W2 ns/op per CPU, start: $(tr '\n' ';' <"$O/probe_start.txt")"
fast=$(sort -k2 -g "$O/probe_start.txt" | head -1 | cut -d' ' -f1)
fast8=$(sort -k2 -g "$O/probe_start.txt" | head -8 | cut -d' ' -f1 | paste -sd,)
echo "fastest CPU $fast; fastest eight: $fast8"
for r in $(seq "${REPS:-4}"); do
  for m in pinned free; do
    pin=(); [ $m = pinned ] && pin=(taskset -c "$fast")
    RMM_RUNTIME=cuda "${pin[@]}" "$bench" --resources pool,binning --workloads w2,w1 \
      --w1-cases 10000:1,100000:1 --json "$O/one_${m}_$r.json" >/dev/null 2>>"$O/err.txt"
  done
done
for r in 1 2; do
  for m in pinned8 free; do
    pin=(); [ $m = pinned8 ] && pin=(taskset -c "$fast8")
    RMM_RUNTIME=cuda "${pin[@]}" "$bench" --resources pool,binning --workloads w3 \
      --json "$O/w3_${m}_$r.json" >/dev/null 2>>"$O/err.txt"
  done
done
probe >"$O/probe_end.txt"
echo "pool W2 ns/op per CPU, end:   $(tr '\n' ';' <"$O/probe_end.txt")"
python3 - "$O" <<'PY'
import json, sys, glob, statistics as st
O = sys.argv[1]
for pat in ["one_pinned", "one_free", "w3_pinned8", "w3_free"]:
    cells = {}
    for f in sorted(glob.glob(f"{O}/{pat}_*.json")):
        for x in json.load(open(f)):
            v = x["ns_per_op"]
            if x["workload"].startswith("W3"):
                v = x["operations"] / 2 / x["seconds"] / 1e6  # Mpairs/s
            cells.setdefault((x["resource"], x["workload"]), []).append(v)
    for (res, w), ys in sorted(cells.items()):
        unit = "Mpairs/s" if w.startswith("W3") else "ns/op"
        print(f"{pat:<11} {res:<8} {w:<32} " + " ".join(f"{y:.1f}" for y in ys)
              + f"  median {st.median(ys):.1f} {unit}")
PY
