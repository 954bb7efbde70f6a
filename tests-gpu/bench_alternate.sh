#!/usr/bin/env bash
# A/B of rmm-bench builds on the GPU machine: each round runs every build once, in an order
# that rotates from round to round, each in a fresh process (this machine fixes a process's
# speed when it starts: see docs/gpu-runs.md), then prints the median ns/op (Mpairs/s for
# W3) per build and cell, and each build's median ÷ the first build's.
#
#   ROUNDS=6 ARGS="--resources pool --workloads w2,w1" bash tests-gpu/bench_alternate.sh A B ...
#
# A, B, ...: rmm-bench executables. Every run's table goes to $OUT/bench_alternate.log (when
# OUT is set).
set -euo pipefail
ROUNDS=${ROUNDS:-6}
ARGS=${ARGS:---resources pool,binning,arena --workloads w2,w1}
RUNTIME=${RMM_RUNTIME:-cuda}
[ $# -ge 1 ] || { echo "usage: $0 rmm-bench [rmm-bench ...]" >&2; exit 2; }
logs=$(mktemp -d)
builds=("$@")
n=${#builds[@]}
for ((r = 0; r < ROUNDS; r++)); do
  for ((k = 0; k < n; k++)); do
    b=$(( (k + r) % n ))
    # shellcheck disable=SC2086
    RMM_RUNTIME=$RUNTIME RMM_COUNTERS=1 "${builds[$b]}" $ARGS >"$logs/b$b-r$r.txt" 2>&1 ||
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
            m = re.match(r"^(\S+)\s+(W\d .*?)\s{2,}([\d.]+)\s+([\d.]+)\s", line)
            if not m:
                continue
            key = (m.group(1), m.group(2).strip())
            if key not in cells:
                cells[key] = {}
                order.append(key)
            # W3 rows: the table's ns/op column is per operation as for the others.
            cells[key].setdefault(b, []).append(float(m.group(4)))
print(f"medians of {rounds} rounds, ns/op (W3: of the aggregate, 1000 / (2 × Mpairs/s)); ratio = build ÷ {names[0]}")
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
EOF
