#!/usr/bin/env bash
# tests-gpu/mode_probe.cpp in PROCS fresh processes per variant, the variants rotating:
#   plain     the CUDA runtime only
#   preload   the same with librmm.so (.carry/prefix) preloaded but never called
#   plain-R   plain under `setarch -R` (no address-space randomization)
#   preload-R preload under `setarch -R`
# then the medians per variant and how many processes landed on the slow side of each
# cell (above the midpoint of all processes' fastest and slowest). VARIANTS narrows the list.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cuda=${CUDA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")}
b=/tmp/mode-probe; mkdir -p $b
g++ -O2 -std=c++17 -I"$cuda/include" "$root/tests-gpu/mode_probe.cpp" -L"$cuda/lib64" \
  -L"$cuda/targets/x86_64-linux/lib" -lcudart -ldl -o $b/probe || exit 1
lib=$root/.carry/prefix/lib/librmm.so
[ -f "$lib" ] || { echo "no $lib (scripts/make-carry.sh; carry .carry/prefix)"; exit 2; }
PROCS=${PROCS:-8}
read -ra vs <<<"${VARIANTS:-plain preload plain-R preload-R}"
: >$b/lines
for r in $(seq "$PROCS"); do
  for k in $(seq 0 $((${#vs[@]} - 1))); do
    v=${vs[$(((r - 1 + k) % ${#vs[@]}))]}
    pre=(); [[ $v == preload* ]] && pre=(LD_PRELOAD="$lib")
    norand=(); [[ $v == *-R ]] && norand=(setarch "$(uname -m)" -R)
    echo "$v $(env "${pre[@]}" RMM_RUNTIME=cuda "${norand[@]}" $b/probe "${RUNS:-3}")" | tee -a $b/lines
  done
done
python3 - $b/lines <<'PY'
import re, sys, statistics as st
rows = [l.split() for l in open(sys.argv[1]) if "cuda64=" in l]
cells = ["cuda64", "cuda1", "async1", "cpu", "mem"]
val = lambda r, c: float(next(x for x in r if x.startswith(c + "=")).split("=")[1])
mid = {c: (min(val(r, c) for r in rows) + max(val(r, c) for r in rows)) / 2 for c in cells}
for v in dict.fromkeys(r[0] for r in rows):
    mine = [r for r in rows if r[0] == v]
    print(f"{v:<10} n={len(mine)}", "  ".join(
        f"{c} median {st.median(val(r, c) for r in mine):.0f}, slow {sum(val(r, c) > mid[c] for r in mine)}"
        for c in cells))
# Does the host's speed explain a process's cells? Rank correlation over all processes.
def ranks(xs):
    order = sorted(range(len(xs)), key=lambda i: xs[i]); r = [0] * len(xs)
    for k, i in enumerate(order): r[i] = k
    return r
def spearman(a, b):
    ra, rb = ranks(a), ranks(b); n = len(a)
    return 1 - 6 * sum((x - y) ** 2 for x, y in zip(ra, rb)) / (n * (n * n - 1))
for probe in ["cpu", "mem"]:
    print(f"Spearman with {probe}:", "  ".join(
        f"{c} {spearman([val(r, c) for r in rows], [val(r, probe) for r in rows]):+.2f}" for c in cells[:3]))
print("in order (cuda64 cuda1 async1 cpu mem):")
for r in rows:
    print(" ", r[0], *(f"{val(r, c):g}" for c in cells))
PY
