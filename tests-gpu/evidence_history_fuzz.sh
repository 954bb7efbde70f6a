#!/usr/bin/env bash
# One GPU batch for the memory history's overhead, the vmm pool's C++ tests under
# compute-sanitizer memcheck and the C ABI fuzzer's operation count, from the project root
# with .carry/prefix and .carry/rmm-bench carried (scripts/make-carry.sh):
#   OUT=$OUT bash tests-gpu/evidence_history_fuzz.sh
# 1. tests-gpu/clock_probe.c; rmm-bench's `hist` rows (W2 through the C ABI with the history
#    off, on, on with stacks) for pool and vmm_pool, ROUNDS times, and once with a ring of
#    SMALL_RING events when set; W4 for pool and vmm_pool W4_ROUNDS times; all alone on the
#    machine;
# 2. then, side by side: scripts/gpu-sanitize.sh (TOOLS=memcheck ONLY=vmm; MEMCHECK=0 skips
#    it) and scripts/gpu-fuzz.sh (BUILDS=fast): with PROBE_S, two probes of that many seconds
#    (every kind; FAST_KINDS, without the kinds whose operations are runtime calls), then
#    the long run (FUZZ_S seconds, SEEDS, THREADS, PARALLEL processes; LONG_KINDS=fast for
#    FAST_KINDS, auto for the faster probe's, else every kind).
# Writes $OUT/evidence.log, $OUT/hist-N.json, $OUT/sanitize.log and $OUT/fuzz-*.log.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-/tmp/evidence-history-fuzz}
mkdir -p "$OUT"
exec > >(tee "$OUT/evidence.log") 2>&1
stamp() { echo "== [$SECONDS s] $*"; }
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv
export RMM_RUNTIME=cuda
stamp "clock and lock costs (tests-gpu/clock_probe.c)"
gcc -O2 tests-gpu/clock_probe.c -o /tmp/clock_probe && /tmp/clock_probe
for r in $(seq 1 "${ROUNDS:-2}"); do
  stamp "hist round $r"
  .carry/rmm-bench --resources pool,vmm_pool --workloads hist --json "$OUT/hist-$r.json" |
    grep -E '^(resource|pool|vmm_pool) '
done
if [[ -n "${SMALL_RING:-}" ]]; then
  stamp "hist with a ring of $SMALL_RING events"
  .carry/rmm-bench --resources pool,vmm_pool --workloads hist --history-entries "$SMALL_RING" \
    --json "$OUT/hist-ring$SMALL_RING.json" | grep -E '^(resource|pool|vmm_pool) '
fi
for r in $(seq 1 "${W4_ROUNDS:-0}"); do
  stamp "w4 round $r"
  .carry/rmm-bench --resources pool,vmm_pool --workloads w4 --json "$OUT/w4-$r.json" |
    grep -E '^(resource|pool|vmm_pool) '
done
if [[ "${MEMCHECK:-1}" == 1 ]]; then
  stamp "memcheck (vmm), beside the fuzzer"
  TOOLS=memcheck ONLY=vmm LOGS=/tmp/gpu-sanitize bash scripts/gpu-sanitize.sh >"$OUT/sanitize.log" 2>&1 &
  san_pid=$!
fi
# The kinds whose every operation is a runtime allocation or free (cudaFree synchronizes the
# device, stalling every other thread's work): left out of FAST_KINDS.
all_kinds=$(sed -n '/kind_names{/,/};/p' tests-fuzz/fuzz_c_abi.cpp | grep -o '"[a-z_]*"' | tr -d '"')
slow='^(cuda|managed|pinned_host|aligned|prefetch|callback|system|sam_headroom)$'
FAST_KINDS=$(grep -vE "$slow" <<<"$all_kinds" | paste -sd, -)
fuzz() { # label, then environment for scripts/gpu-fuzz.sh
  local label=$1
  shift
  stamp "fuzzer: $label"
  env BUILDS=fast LOGS="/tmp/gpu-fuzz-$label" "$@" bash scripts/gpu-fuzz.sh >"$OUT/fuzz-$label.log" 2>&1
  echo "gpu-fuzz exit status $?"
  grep -A30 '^build ' "$OUT/fuzz-$label.log" | grep -E '^(fast|asan) '
  tail -n 1 "$OUT/fuzz-$label.log"
}
if [[ "${PROBE_S:-0}" != 0 ]]; then
  fuzz probe-all SEEDS=301 THREADS=16 FAST_SECONDS="$PROBE_S"
  fuzz probe-fast SEEDS=302 THREADS=16 FAST_SECONDS="$PROBE_S" KINDS="$FAST_KINDS"
fi
rate() { grep -oE '[0-9]+ ops/s overall' "$OUT/fuzz-$1.log" | grep -oE '^[0-9]+' || echo 0; }
long_kinds=
case "${LONG_KINDS:-all}" in
  fast) long_kinds=$FAST_KINDS ;;
  auto) (($(rate probe-fast) > $(rate probe-all))) && long_kinds=$FAST_KINDS ;;
esac
echo "long run kinds: ${long_kinds:-every kind}"
fuzz long SEEDS="${SEEDS:-201 202 203 204 205 206}" THREADS="${THREADS:-16}" \
  PARALLEL="${PARALLEL:-1}" FAST_SECONDS="${FUZZ_S:-360}" KINDS="$long_kinds"
sed -n '/^== per kind/,/^gpu-fuzz:/p' "$OUT/fuzz-long.log" | head -40
if [[ -n "${san_pid:-}" ]]; then
  stamp "waiting for memcheck"
  wait "$san_pid"
  echo "gpu-sanitize exit status $?"
  tail -n 12 "$OUT/sanitize.log"
fi
stamp "done"
