#!/usr/bin/env bash
# bench-vs-rmm with one more column, vmm_pool: rmm-rs's pool on virtual memory
# (rmm::mr::vmm_pool_memory_resource) against RMM 23.12's pool_memory_resource, which is the
# nearest RMM has. It copies the carried harness (.carry/bench-vs-rmm/harness), adds the
# resource to perf_anchor.cpp (below: sized as the pool, half of free memory for W1-W3,
# from nothing for W4; its peak upstream is its peak mapped bytes, which is its pool size
# at the end of a workload, as it unmaps nothing without release()), builds both variants
# with the harness's build.sh and runs
#   rmm-rs:    --resources pool,vmm_pool
#   RMM 23.12: --resources pool (its rows are also the vmm_pool column's baseline)
# then the harness's compare.py. Everything else is bench-vs-rmm's (../shared/bench-vs-rmm).
#   OUT=$OUT bash tests-gpu/bvr_vmm.sh    (carry .carry/bench-vs-rmm; WORKLOADS, QUICK=1,
#   RMM_T: the RMM run's time limit, default 260 s; DRYRUN_CUDART as in run.sh)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
C=$PWD/.carry/bench-vs-rmm
OUT=${OUT:-/tmp/bvr-vmm}; mkdir -p "$OUT"
W=/tmp/bvr-vmm-work; rm -rf "$W"; mkdir -p "$W"
WORKLOADS=${WORKLOADS:-w2,w1,w4,w3}
exec > >(tee "$OUT/bvr_vmm.log") 2>&1
for d in /usr/local/cuda/bin /usr/local/cuda-*/bin; do [ -d "$d" ] && PATH="$PATH:$d"; done
cp -r "$C/harness" "$W/harness"
python3 - "$W/harness/perf_anchor.cpp" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
def sub(old, new):
    global s
    assert s.count(old) == 1, f"perf_anchor.cpp changed: {old!r} not found once"
    s = s.replace(old, new)
sub("#include <rmm/mr/device/pool_memory_resource.hpp>\n",
    "#include <rmm/mr/device/pool_memory_resource.hpp>\n"
    "#if __has_include(<rmm/mr/device/vmm_pool_memory_resource.hpp>)\n"
    "#include <rmm/mr/device/vmm_pool_memory_resource.hpp>\n"
    "#define PERF_HAS_VMM 1\n"
    "#endif\n")
sub("  async_mr* async{nullptr};\n",
    "  async_mr* async{nullptr};\n  std::function<std::size_t()> peak_fn;  // vmm_pool: its mapped bytes\n")
sub("    if (async != nullptr) { return async_reserved_high(*async); }\n",
    "    if (peak_fn) { return peak_fn(); }\n"
    "    if (async != nullptr) { return async_reserved_high(*async); }\n")
sub("  s->cuda    = std::make_unique<rmm::mr::cuda_memory_resource>();\n",
    "#ifdef PERF_HAS_VMM\n"
    "  if (name == \"vmm_pool\") {\n"
    "    std::size_t const initial =\n"
    "      sz == sizing::grow ? 0 : align_down_256(PERF_FREE_MEMORY().first / 2);\n"
    "    auto v     = std::make_unique<rmm::mr::vmm_pool_memory_resource>(initial);\n"
    "    auto* raw  = v.get();\n"
    "    s->peak_fn = [raw] { return raw->pool_size(); };\n"
    "    s->top     = std::move(v);\n"
    "    s->mr      = s->top.get();\n"
    "    return s;\n"
    "  }\n"
    "#endif\n"
    "  s->cuda    = std::make_unique<rmm::mr::cuda_memory_resource>();\n")
sub('  if (name == "pool") {\n', '  if (name == "pool" || name == "vmm_pool") {\n')
open(p, "w").write(s)
c = p.replace("perf_anchor.cpp", "compare.py")
t = open(c).read()
old = 'RES = ["pool", "binning",'
assert t.count(old) == 1, "compare.py changed"
open(c, "w").write(t.replace(old, 'RES = ["pool", "vmm_pool", "binning",'))
PY
[ $? = 0 ] || exit 1
echo "== [$SECONDS s] build"
CARRY=$C BUILD=$W/build JOBS=${JOBS:-16} bash "$W/harness/build.sh" >"$W/build.log" 2>&1
grep perf_anchor "$W/build/build-status.txt"
grep -qx "perf_anchor_rmmrs ok" "$W/build/build-status.txt" || { grep -m10 error "$W/build/logs/perf_anchor_rmmrs.log"; exit 1; }
ARGS=(); [ -n "${QUICK:-}" ] && ARGS+=(--quick)
RMM_ENV=(); RS_ENV=(RMM_RUNTIME=cuda)
if [ -n "${DRYRUN_CUDART:-}" ]; then
  RMM_ENV=(LD_LIBRARY_PATH="$DRYRUN_CUDART" CUDART_STUB_MEMORY_GIB=80)
  RS_ENV=(RMM_RUNTIME=host RMM_HOST_DEVICE_MEMORY=80GiB)
fi
echo "== [$SECONDS s] rmm-rs: pool, vmm_pool"
env "${RS_ENV[@]}" timeout 200 "$W/build/perf_anchor_rmmrs" --resources pool,vmm_pool \
  --workloads "$WORKLOADS" --json "$OUT/perf_rmmrs.json" "${ARGS[@]}" >"$W/rmmrs.txt" 2>&1 || echo "rmm-rs: exit $?"
echo "== [$SECONDS s] RMM 23.12: pool"
RMM_T=${RMM_T:-260}
env "${RMM_ENV[@]}" timeout "$RMM_T" "$W/build/perf_anchor_rmm" --resources pool --workloads "$WORKLOADS" \
  --deadline-s $((RMM_T - 40)) --json "$W/perf_rmm_pool.json" "${ARGS[@]}" >"$W/rmm.txt" 2>&1 || echo "RMM: exit $?"
# RMM's pool rows stand for both columns.
python3 - "$W/perf_rmm_pool.json" "$OUT/perf_rmm.json" <<'PY'
import json, sys, copy
d = json.load(open(sys.argv[1]))
rows = []
for r in d["rows"]:
    rows.append(r)
    if r["resource"] == "pool":
        v = copy.deepcopy(r); v["resource"] = "vmm_pool"; rows.append(v)
d["rows"] = rows
json.dump(d, open(sys.argv[2], "w"), indent=1)
PY
echo "== [$SECONDS s] comparison (vmm_pool column: RMM's pool / rmm-rs's vmm pool)"
mkdir -p "$W/gbench"
python3 "$W/harness/compare.py" "$OUT/perf_rmm.json" "$OUT/perf_rmmrs.json" "$W/gbench" >"$OUT/comparison.md"
cat "$OUT/comparison.md"
