#!/usr/bin/env bash
# The interposer against a statically linked CUDA runtime (nvcc's default), on a GPU
# machine. Carry librmm_preload.so (RMM_PRELOAD_LIB, default .carry/lib/librmm_preload.so).
#  (a) builds tests/gpu/preload_loop.cu twice, with nvcc's default (-cudart static: the
#      runtime reaches the driver through cuGetProcAddress) and with -cudart shared;
#  (b) runs mode MODE (alloc) REPS (5) times each, alternating: static raw, static under the
#      interposer, shared raw, shared under the interposer; prints every µs/iteration, the
#      medians, and checks that every checksum is identical;
#  (c) prints the interposer's statistics of one static run (what each entry point served,
#      the upstream allocations: the real cuMemAlloc calls);
#  (d) with SANITIZE=1, compute-sanitizer memcheck of the static program under the
#      interposer (SAN_ITERS iterations).
set -uo pipefail
cd "$(dirname "$0")/.."
lib="${RMM_PRELOAD_LIB:-$PWD/.carry/lib/librmm_preload.so}"
iters="${ITERS:-2000}" reps="${REPS:-5}" mode="${MODE:-alloc}"
[ -f "$lib" ] || { echo "missing $lib"; exit 2; }
fail=0
nvcc -O2 -o /tmp/loop_static tests/gpu/preload_loop.cu || exit 2
nvcc -O2 -cudart shared -o /tmp/loop_shared tests/gpu/preload_loop.cu || exit 2
echo "static build links cudart dynamically: $(ldd /tmp/loop_static | grep -c cudart) (0 expected)"

declare -A times=()
sums=""
run() {  # name exe preload
  local out
  if [ "$3" = 1 ]; then
    out="$(LD_PRELOAD="$lib" RMM_PRELOAD_STATS=1 "$2" "$iters" "$mode" 2>/tmp/err)" || { echo "$1 FAILED"; cat /tmp/err; fail=1; }
  else
    out="$("$2" "$iters" "$mode" 2>/tmp/err)" || { echo "$1 FAILED"; cat /tmp/err; fail=1; }
  fi
  [ "$(awk '{print $4}' <<<"$out")" = 0 ] || { echo "$1: bad result: $out"; fail=1; }
  times["$1"]+="$(awk '{print $6}' <<<"$out") "
  sums+="$(awk '{print $8}' <<<"$out")"$'\n'
}
names=("static raw" "static preload" "shared raw" "shared preload")
for ((r = 0; r < reps; r++)); do
  run "static raw" /tmp/loop_static 0
  run "static preload" /tmp/loop_static 1
  cp /tmp/err /tmp/static_stats
  run "shared raw" /tmp/loop_shared 0
  run "shared preload" /tmp/loop_shared 1
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END{print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}'; }
echo "mode $mode, $iters iterations, $reps alternating runs each (µs/iteration)"
for n in "${names[@]}"; do printf '%-16s median %10s   runs %s\n' "$n" "$(median <<<"${times[$n]}")" "${times[$n]}"; done
if [ "$(sort -u <<<"$sums" | grep -c .)" = 1 ]; then echo "checksums identical"; else echo "CHECKSUMS DIFFER"; fail=1; fi
echo "-- statistics of the last static run under the interposer"
sed -n '/rmm_preload statistics/,$p' /tmp/static_stats

if [ "${SANITIZE:-0}" = 1 ]; then
  echo "-- compute-sanitizer memcheck, static build under the interposer"
  cs="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
  "$cs" --tool memcheck --target-processes all --print-limit 20 \
    env LD_PRELOAD="$lib" RMM_PRELOAD_STATS=1 /tmp/loop_static "${SAN_ITERS:-200}" "$mode" 2>&1 | tail -25
fi
exit $fail
