#!/usr/bin/env bash
# W3's scaling against the machine's: alternates, ROUNDS times, tests-gpu/scale_probe.c
# (threads that share nothing: the most any allocator could scale on these cores) and
# rmm-bench's W3 (pool and binning, host runtime: CPU only), each in a fresh process, and
# prints per round and as medians each one's aggregate rate at 1 thread and its scaling at
# 2, 4, 8 and 16 threads. Needs .carry/rmm-bench (scripts/make-carry.sh) and gcc.
#   ROUNDS=6 bash tests-gpu/w3_ceiling.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bench=${BENCH:-$root/.carry/rmm-bench}
probe=/tmp/scale_probe
gcc -O2 -pthread -o "$probe" "$root/tests-gpu/scale_probe.c"
logs=$(mktemp -d)
for ((r = 0; r < ${ROUNDS:-6}; r++)); do
  "$probe" "${LOOPS:-2000000}" 1 >"$logs/probe-$r.txt"
  RMM_RUNTIME=host RMM_COUNTERS=0 RMM_HOST_DEVICE_MEMORY=80GiB "$bench" \
    --resources pool,binning --workloads w3 >"$logs/bench-$r.txt" 2>&1
done
python3 - "$logs" "${ROUNDS:-6}" <<'PY'
import re, statistics, sys
logs, rounds = sys.argv[1], int(sys.argv[2])
runs = {}  # subject -> list of {T: rate}
for r in range(rounds):
    for line in open(f"{logs}/probe-{r}.txt"):
        m = re.search(r"T=\s*(\d+)\s+([\d.]+) Mloops/s", line)
        if m:
            key = "probe (Mloops/s)"
            if int(m.group(1)) == 1:
                runs.setdefault(key, []).append({})
            runs[key][-1][int(m.group(1))] = float(m.group(2))
    for line in open(f"{logs}/bench-{r}.txt"):
        m = re.match(r"^(\S+)\s+W3 threads T=(\d+).*?([\d.]+) Mpairs/s", line)
        if m:
            key = f"{m.group(1)} (Mpairs/s)"
            if int(m.group(2)) == 1:
                runs.setdefault(key, []).append({})
            runs[key][-1][int(m.group(2))] = float(m.group(3))
for key, rs in runs.items():
    print(f"{key}: per round, rate at T=1 and scaling at T=2, 4, 8, 16")
    for x in rs:
        print("  " + f"{x[1]:8.1f}  " + "  ".join(f"x{x[t] / x[1]:.2f}" for t in (2, 4, 8, 16)))
    med = {t: statistics.median(x[t] / x[1] for x in rs) for t in (2, 4, 8, 16)}
    best = max(x[1] for x in rs)
    print("  median scaling " + "  ".join(f"T={t} x{med[t]:.2f}" for t in med)
          + f"; T=8 over the fastest T=1 of all rounds: x{statistics.median(x[8] for x in rs) / best:.2f}")
PY
