#!/usr/bin/env bash
# GPU evidence: the C ABI fuzzer (sanitized and fast builds, seeds 11-13, 8 and 16 threads),
# tests-gpu/fragment_snapshot.c under compute-sanitizer memcheck, then bench-vs-rmm's
# perf_anchor with RMM 23.12's process first (the harness runs rmm-rs's first), rmm-rs's twice
# after it and RMM's thin cells again: how much the thin cells move between processes of one
# build, and whether the order decides which build reads slow. About 8 minutes on the GPU
# machine, from the project root, carrying .carry/bench-vs-rmm, .carry/prefix and
# .carry/rmm-viz. Output: $OUT/order.log, perf_anchor JSON (p_*.json), the two comparisons
# (cmp1.md, cmp2.md), the snapshots and reports (order-files.tar.gz).
NAME=order
# shellcheck source=tests-gpu/evidence_common.sh
source "$(dirname "$0")/evidence_common.sh"
export RMM_RUNTIME=cuda
stamp "fuzzer: asan and fast builds, seeds 11-13, 8 and 16 threads"
BUILDS="asan fast" SEEDS="11 12 13" THREADS="8 16" ASAN_SECONDS=36 FAST_SECONDS=120 timeout 280 bash scripts/gpu-fuzz.sh 2>&1 | grep -v "^  [a-z_]* *[0-9]* *[0-9]* *0 *0$"
grep -h "^DEFECT" /tmp/gpu-fuzz/*.log | head -10
wait $pab_pid
cat /tmp/pab/build-status.txt
stamp "fragment snapshots under memcheck"
for k in pool vmm_pool; do
  timeout 60 compute-sanitizer --tool memcheck --leak-check full $W/fragment_snapshot $k $W/frag-$k.json >$W/cs.log 2>&1
  echo "  memcheck [fragment_snapshot $k]: exit $?; $(grep -E 'ERROR SUMMARY|LEAK SUMMARY' $W/cs.log | tr '\n' ' ')"
  grep -E "^(pool|vmm_pool):" $W/cs.log
  timeout 60 $C/rmm-viz $W/frag-$k.json -o $W/frag-$k.html
done
tar -C $W -czf "$OUT/order-files.tar.gz" frag-pool.json frag-pool.html frag-vmm_pool.json frag-vmm_pool.html 2>/dev/null
stamp "perf_anchor: RMM 23.12 first (full), then rmm-rs (full) twice, then RMM's thin cells"
cd /tmp/pab || exit 2
./perf_anchor_rmm --json $OUT/p_rmm.json --deadline-s 260 >$W/p_rmm.txt 2>&1; echo "rmm exit $?"
RMM_RUNTIME=cuda ./perf_anchor_rmmrs --json $OUT/p_rs1.json >$W/p_rs1.txt 2>&1; echo "rmm-rs 1 exit $?"
RMM_RUNTIME=cuda ./perf_anchor_rmmrs --json $OUT/p_rs2.json >$W/p_rs2.txt 2>&1; echo "rmm-rs 2 exit $?"
./perf_anchor_rmm --resources cuda_async,cuda --json $OUT/p_rmm_thin.json >$W/p_rmm_thin.txt 2>&1; echo "rmm thin exit $?"
for f in p_rmm p_rs1 p_rs2 p_rmm_thin; do echo "--- $f"; grep -E "^(cuda|cuda_async) +W[124]" $W/$f.txt; done
python3 $C/bench-vs-rmm/harness/compare.py $OUT/p_rmm.json $OUT/p_rs1.json /nonexistent >$OUT/cmp1.md 2>&1
python3 $C/bench-vs-rmm/harness/compare.py $OUT/p_rmm.json $OUT/p_rs2.json /nonexistent >$OUT/cmp2.md 2>&1
sed -n '/ns per operation/,/W3 threads/p' $OUT/cmp1.md
sed -n '/ns per operation/,/W3 threads/p' $OUT/cmp2.md
stamp done
