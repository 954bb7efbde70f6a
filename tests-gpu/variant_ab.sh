#!/usr/bin/env bash
# A/B of library variants through rmm-bench, which links the library statically: give it
# stripped rmm-bench binaries built from each variant (build, `strip -o
# .carry/variants/rmm-bench-NAME target/release/rmm-bench`, revert, next), carry
# .carry/variants, and it runs them in fresh processes, alternating the order every round,
# unpinned, and prints each cell's median and fastest process per variant (and each ÷ the
# first variant's) and each resource's W1 N=100 000 ÷ N=10 000. The machine's processes
# fall in a fast and a slow group (the core they land on), so with few rounds the medians
# follow how many of each variant's processes were lucky; the fastest ones do not.
#   VARIANTS="v0 v1" REPS=8 RES=pool,arena RT=host OUT=$OUT bash tests-gpu/variant_ab.sh
# RT=host times the CPU's work alone (the sub-allocators' W1 and W2 make no runtime call
# after their first growth, and ran at the same speed with either runtime on the H100
# machine).
set -u
root="$(cd "$(dirname "$0")/.." && pwd)"
dir=${DIR:-$root/.carry/variants}
O=${OUT:-/tmp/variant_ab}; mkdir -p "$O"
VS=${VARIANTS:?set VARIANTS to the names of .carry/variants/rmm-bench-NAME}
for r in $(seq "${REPS:-8}"); do
  vs=$VS; [ $((r % 2)) = 0 ] && vs=$(echo "$VS" | tr ' ' '\n' | tac | tr '\n' ' ')
  for v in $vs; do
    RMM_RUNTIME=${RT:-host} RMM_HOST_DEVICE_MEMORY=80GiB "$dir/rmm-bench-$v" \
      --resources "${RES:-pool,arena}" --workloads "${WORKLOADS:-w2,w1}" \
      --w1-cases 10000:1,100000:1 --json "$O/ab_${v}_$r.json" >/dev/null 2>>"$O/err.txt" ||
      echo "$v round $r failed"
  done
done
python3 - "$O" $VS <<'PY'
import json, sys, glob, statistics as st
O, vs = sys.argv[1], sys.argv[2:]
cells = {}
for v in vs:
    for f in glob.glob(f"{O}/ab_{v}_*.json"):
        for x in json.load(open(f)):
            cells.setdefault((x["resource"], x["workload"]), {}).setdefault(v, []).append(x["ns_per_op"])
for (res, w), d in sorted(cells.items()):
    base = st.median(d[vs[0]]) if vs[0] in d else None
    bmin = min(d[vs[0]]) if vs[0] in d else None
    print(f"{res:<8} {w:<32} " + "  ".join(
        f"{v} {st.median(d[v]):7.1f}" + (f" ({st.median(d[v]) / base:.3f})" if base else "")
        + f" min {min(d[v]):.1f}" + (f" ({min(d[v]) / bmin:.3f})" if bmin else "")
        for v in vs if v in d))
for res in sorted({k[0] for k in cells}):
    a = next((d for k, d in cells.items() if k[0] == res and "N=10000 " in k[1]), None)
    b = next((d for k, d in cells.items() if k[0] == res and "N=100000 " in k[1]), None)
    if a and b:
        print(f"{res}: W1 N=100 000 / N=10 000: " + "  ".join(
            f"{v} {st.median(b[v]) / st.median(a[v]):.2f}" for v in vs if v in a and v in b))
PY
