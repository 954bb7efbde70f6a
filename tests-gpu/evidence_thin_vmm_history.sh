#!/usr/bin/env bash
# GPU evidence for the thin resources, the pool on virtual memory and the memory history, in
# one command on the GPU machine (about 5 minutes), from the project root, carrying
# .carry/bench-vs-rmm, .carry/prefix, .carry/lib, .carry/bin, .carry/rmm-bench,
# .carry/rmm-replay and .carry/rmm-viz (scripts/make-carry.sh, then bench-vs-rmm's prepare.sh
# with RMMRS_PREFIX=.carry/prefix):
#   - tests-gpu/thin_paths.cpp: cuda, managed and cuda_async through the runtime, the driver,
#     the C ABI and the C++ classes, alternating in one process (allocations and frees apart);
#   - bench-vs-rmm's perf_anchor, both builds, thin cells only, in alternating processes;
#   - tests-gpu/vmm_release.c (cudaMemGetInfo around release()), the Rust vmm tests,
#     rmm-replay over tests/data, compute-sanitizer memcheck, rmm-bench pool vs vmm_pool and
#     the history overhead (3 rounds);
#   - PyTorch's MLP under the interposer with RMM_MEMORY_HISTORY (stacks), a deliberate out of
#     memory ended with os._exit, tests-gpu/fragment_snapshot.c, each rendered by rmm-viz;
#   - 30 s of the C ABI fuzzer (its rate).
# Output: $OUT/evidence.log, $OUT/evidence-files.tar.gz (snapshots and reports), rmm-bench JSON.
NAME=evidence
# shellcheck source=tests-gpu/evidence_common.sh
source "$(dirname "$0")/evidence_common.sh"
libtests=$(find "$C/bin" -maxdepth 1 -name "rmm-*" -type f | head -1)
PY=/opt/torch/.venv/bin/python3
wait $pab_pid
cat /tmp/pab/build-status.txt
export RMM_RUNTIME=cuda

stamp "thin paths in one process (5 alternating rounds, medians)"
REPS=1 CASES="cuda 10000 1 5;cuda 1000 64 5;cuda 2000 1 5;cuda 30000 1 3;managed 10000 1 5;managed 1000 64 5;async 10000 1 5;async 1000 64 5;async 50000 1 5 w4;cuda 20000 1 5 w4" \
  timeout 240 bash tests-gpu/thin_paths.sh
stamp "  cuda N=10000 after a primed async pool is made and destroyed before each run (PRE_ASYNC)"
PRE_ASYNC=1 REPS=1 CASES="cuda 10000 1 5" timeout 60 bash tests-gpu/thin_paths.sh
stamp "  cuda N=10000 while 40 GiB is held (HOLD_GIB=40)"
HOLD_GIB=40 REPS=1 CASES="cuda 10000 1 5" timeout 60 bash tests-gpu/thin_paths.sh

stamp "perf_anchor processes, W1 cuda cells alone, alternating builds"
pa() { # variant args...
  local v=$1; shift
  timeout 120 /tmp/pab/perf_anchor_$v "$@" 2>/dev/null | grep -E "^(cuda|cuda_async) +W[124]" | sed "s/^/  [$v] /"
}
for i in 1 2 3; do
  if [ $((i % 2)) = 1 ]; then pa rmmrs --workloads w1 --resources cuda; pa rmm --workloads w1 --resources cuda
  else pa rmm --workloads w1 --resources cuda; pa rmmrs --workloads w1 --resources cuda; fi
done
stamp "  cuda_async and cuda, W2 W1 W4, alternating"
for i in 1 2; do
  if [ $i = 1 ]; then pa rmmrs --workloads w2,w1,w4 --resources cuda_async,cuda; pa rmm --workloads w2,w1,w4 --resources cuda_async,cuda
  else pa rmm --workloads w2,w1,w4 --resources cuda_async,cuda; pa rmmrs --workloads w2,w1,w4 --resources cuda_async,cuda; fi
done

stamp "vmm pool: vmm_release (16 GiB, every 64th block kept)"
timeout 120 $W/vmm_release 16 64; echo "exit $?"
stamp "  Rust vmm tests on CUDA"
timeout 120 $libtests vmm --test-threads=1 2>&1 | tail -25
stamp "  rmm-replay over the repository's traces"
timeout 60 $C/rmm-replay tests/data/replay_fragmentation.csv --mr pool:0:128M --mr vmm_pool:0:128M --mr arena:128M --mr async:128M; echo "exit $?"
timeout 60 $C/rmm-replay tests/data/replay_3threads.csv --mr pool --mr vmm_pool --mr arena --mr async; echo "exit $?"
stamp "memory history: PyTorch MLP under the interposer with RMM_MEMORY_HISTORY (stacks)"
PYTORCH_NO_CUDA_MEMORY_CACHING=1 RMM_MEMORY_HISTORY=$W/mlp.json RMM_MEMORY_HISTORY_STACKS=1 LD_PRELOAD=$C/lib/librmm_preload.so \
  timeout 120 $PY tests-gpu/preload_torch.py --child; echo "exit $?"
ls -la $W/mlp.json && timeout 60 $C/rmm-viz $W/mlp.json -o $W/mlp.html; echo "rmm-viz exit $?"; ls -la $W/mlp.html
stamp "  deliberate out of memory, process ends with os._exit (no exit handlers)"
PYTORCH_NO_CUDA_MEMORY_CACHING=1 RMM_MEMORY_HISTORY=$W/oom.json LD_PRELOAD=$C/lib/librmm_preload.so timeout 60 $PY -c "
import os, torch
x = torch.ones(1 << 20, device='cuda')
try:
    torch.empty(1 << 42, dtype=torch.uint8, device='cuda')
except Exception as e:
    print('torch:', type(e).__name__, str(e).splitlines()[0][:300])
os._exit(0)
"
ls -la $W/oom.json && $PY -c "
import json; d = json.load(open('$W/oom.json'))
f = [e for e in d['events'] if e['action'] == 'allocate_failed']
print('snapshot at the failure:', len(d['events']), 'events,', len(d['live']), 'live; failed requests:', [(e['size'], e['resource']) for e in f])"
timeout 60 $C/rmm-viz $W/oom.json -o $W/oom.html; echo "rmm-viz exit $?"
stamp "  fragmentation in the block map: fragment_snapshot"
for k in pool vmm_pool; do
  timeout 60 $W/fragment_snapshot $k $W/frag-$k.json; echo "exit $?"
  timeout 60 $C/rmm-viz $W/frag-$k.json -o $W/frag-$k.html; echo "rmm-viz exit $?"
done

tar -C $W -czf "$OUT/evidence-files.tar.gz" mlp.json mlp.html oom.json oom.html frag-pool.json frag-pool.html frag-vmm_pool.json frag-vmm_pool.html pab-build.log 2>/dev/null
stamp "  compute-sanitizer memcheck"
for cmd in "$W/vmm_release 2 16" "$W/fragment_snapshot pool $W/frag-pool.json" "$W/fragment_snapshot vmm_pool $W/frag-vmm_pool.json" "$libtests vmm_pool --test-threads=1"; do
  timeout 200 compute-sanitizer --tool memcheck --leak-check full $cmd >$W/cs.log 2>&1
  echo "  memcheck [$cmd]: exit $?; $(grep -E 'ERROR SUMMARY|LEAK SUMMARY' $W/cs.log | tr '\n' ' ')"
  grep -m3 -E "Invalid|Program hit" $W/cs.log | sed 's/^/    /'
done
stamp "  rmm-bench pool vs vmm_pool, W2 W3 W4 and history, 3 alternating rounds"
for i in 1 2 3; do
  o="pool,vmm_pool"; [ $i = 2 ] && o="vmm_pool,pool"
  timeout 150 $C/rmm-bench --resources $o --workloads w2,w4,w3,hist --w3-steps 50000 --json $W/bench-$i.json >$W/bench-$i.txt 2>&1; echo "round $i exit $?"
done
cat $W/bench-1.txt
for i in 2 3; do grep -E "W2|W4|W3 T=(1|8|16) |history" $W/bench-$i.txt; done

stamp "C ABI fuzzer: rate rate (fast build, 16 threads, 30 s)"
BUILDS=fast SEEDS=1 THREADS=16 FAST_SECONDS=30 timeout 150 bash scripts/gpu-fuzz.sh 2>&1 | tail -30

stamp "pack"
cp $W/bench-*.json "$OUT/" 2>/dev/null
tar -C $W -czf "$OUT/evidence-files.tar.gz" mlp.json mlp.html oom.json oom.html frag-pool.json frag-pool.html frag-vmm_pool.json frag-vmm_pool.html pab-build.log 2>/dev/null
ls -la "$OUT"
stamp done
