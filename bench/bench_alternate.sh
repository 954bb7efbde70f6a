#!/usr/bin/env bash
# A/B of rmm-bench builds on the GPU machine: each round runs every build once, in an order
# that rotates from round to round, each in a fresh process (this machine fixes a process's
# speed when it starts: see docs/gpu-runs.md), then prints the median ns/op (Mpairs/s for
# threads) per build and cell, and each build's median ÷ the first build's; then the fastest
# process per build and cell (the machine's processes fall in a fast and a slow group by the
# core they land on, so with few rounds a median follows how many of a build's processes
# were lucky, and the fastest ones do not), and each build's random N=100 000 ÷ N=10 000.
#
#   ROUNDS=6 ARGS="--resources pool --workloads churn,random" bash bench/bench_alternate.sh A B ...
#
# rmm-bench links the library statically, so library variants are rmm-bench builds: build,
# `strip -o .carry/variants/rmm-bench-NAME target/release/rmm-bench`, revert, next; carry
# .carry/variants. RMM_RUNTIME=host times the CPU's work alone (the sub-allocators' random
# and churn make no runtime call after their first growth, and ran at the same speed with either
# runtime on the H100 machine); its device is RMM_HOST_DEVICE_MEMORY (default 80GiB here).
#
# A, B, ...: rmm-bench executables. Every run's table goes to $OUT/bench_alternate.log (when
# OUT is set).
set -euo pipefail
ROUNDS=${ROUNDS:-6}
ARGS=${ARGS:---resources pool,binning,arena --workloads churn,random}
RUNTIME=${RMM_RUNTIME:-cuda}
export RMM_HOST_DEVICE_MEMORY=${RMM_HOST_DEVICE_MEMORY:-80GiB}
# Per-operation counters (1, the default) cost a little on every operation: 0 times the
# allocators alone.
COUNTERS=${RMM_COUNTERS:-1}
[ $# -ge 1 ] || { echo "usage: $0 rmm-bench [rmm-bench ...]" >&2; exit 2; }
logs=$(mktemp -d)
builds=("$@")
n=${#builds[@]}
for ((r = 0; r < ROUNDS; r++)); do
  for ((k = 0; k < n; k++)); do
    b=$(( (k + r) % n ))
    # shellcheck disable=SC2086
    RMM_RUNTIME=$RUNTIME RMM_COUNTERS=$COUNTERS "${builds[$b]}" $ARGS >"$logs/b$b-r$r.txt" 2>&1 ||
      echo "build $b round $r failed: $(tail -1 "$logs/b$b-r$r.txt")"
  done
done
if [ -n "${OUT:-}" ]; then
  # One file: the device tool brings back only a few files per call.
  for f in "$logs"/*.txt; do echo "== $(basename "$f")"; cat "$f"; done >"$OUT/bench_alternate.log"
fi
python3 - "$logs" "$n" "$ROUNDS" "${builds[@]}" <<'EOF'
import re, statistics, sys
logs, n, rounds, names = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
cells = {}  # (resource, workload) -> build -> [values]
order = []
for b in range(n):
    for r in range(rounds):
        try:
            lines = open(f"{logs}/b{b}-r{r}.txt").read().splitlines()
        except OSError:
            continue
        for line in lines:
            # The workload by name (builds before the names: by code, "W2 churn ...").
            m = re.match(r"^(\S+)\s+((?:W\d |random|churn|threads|streams|replay|fragmentation|history)"
                         r"\b.*?)\s{2,}([\d.]+)\s+([\d.]+)\s", line)
            if not m:
                continue
            key = (m.group(1), m.group(2).strip())
            if key not in cells:
                cells[key] = {}
                order.append(key)
            # threads rows: the table's ns/op column is per operation as for the others.
            cells[key].setdefault(b, []).append(float(m.group(4)))
print(f"medians of {rounds} rounds, ns/op (threads: of the aggregate, 1000 / (2 × Mpairs/s)); ratio = build ÷ {names[0]}")
print("| resource | workload | " + " | ".join(names) + " |")
print("|---|---|" + "---|" * n)
for key in order:
    meds = [statistics.median(cells[key][b]) if cells[key].get(b) else None for b in range(n)]
    base = meds[0]
    row = []
    for v in meds:
        if v is None:
            row.append("—")
        elif base:
            row.append(f"{v:.1f} ({v / base:.2f})")
        else:
            row.append(f"{v:.1f}")
    print(f"| {key[0]} | {key[1]} | " + " | ".join(row) + " |")
print(f"\nfastest process of each build; ratio = build ÷ {names[0]}")
for key in order:
    mins = [min(cells[key][b]) if cells[key].get(b) else None for b in range(n)]
    print(f"| {key[0]} | {key[1]} | " + " | ".join(
        "—" if v is None else f"{v:.1f}" + (f" ({v / mins[0]:.3f})" if mins[0] else "")
        for v in mins) + " |")
for res in dict.fromkeys(k[0] for k in order):
    small = next((cells[k] for k in order if k[0] == res and "N=10000 " in k[1]), None)
    large = next((cells[k] for k in order if k[0] == res and "N=100000 " in k[1]), None)
    if small and large:
        print(f"{res}: random N=100 000 ÷ N=10 000: " + "  ".join(
            f"{names[b]} {statistics.median(large[b]) / statistics.median(small[b]):.2f}"
            for b in range(n) if small.get(b) and large.get(b)))
EOF
