#!/usr/bin/env bash
# The side-by-side run on the GPU machine: rmm-rs against RAPIDS's RMM 26.10, one benchmark source
# (vs_rmm_bench.cpp) built against each, and RMM 26.06's own random_allocations built against
# each; RMM 23.12 (the 23.12 harness's perf_anchor) as a second column when its carry folder is
# there. From the project root, carrying .carry/vs-rmm (scripts/carry-vs-rmm.sh) and, for the
# 23.12 column, .carry/bench-vs-rmm:
#   OUT=$OUT bash bench/vs-rmm/run.sh          (QUICK=1: a smoke run of about a minute)
# Writes into $OUT: comparison.md (the tables), vs_rmm.json (every row of every program, what
# bench/figure.py draws), run.log, logs.tar.gz (build logs, each process's output and JSON).
#
# The programs run alternating: for every workload and resource in turn (QUICK: every
# workload), one process of each primary build (rmm-rs and RMM 26.10; their order rotating from
# one group to the next), then the secondary build's (RMM 23.12), so that the builds see the same machine state; within a
# process each cell is a median of timed runs. The run keeps to TOTAL_S seconds: the primary
# builds first, RMM's own benchmark next, the secondary build with what its allowance
# (SECOND_BUDGET) and the time left give; a cell that did not fit is named in the notes. For a
# whole 23.12 column, a second call: PRIMARY="rmmrs rmm2312" SECONDARY= OUT=... run.sh.
#
# env: OUT (./out), CARRY (.carry/vs-rmm), BVR (.carry/bench-vs-rmm; BVR= for none), BUILD
# (/tmp/vs-rmm-build), QUICK=1, TOTAL_S (470; QUICK 240), PRIMARY ("rmmrs rapids"), SECONDARY
# ("rmm2312" when BVR is there), SECOND_BUDGET (150 s; QUICK 20), GB_BUDGET (60 s; QUICK 20),
# GROUP_BY (resource: a process per workload and resource; QUICK: workload, one per workload),
# SKIP_GBENCH=1, BUILD_LIMIT (240 s), SLOW_S (4: a cell whose warm-up takes longer gets one
# timed run), LONE_S (15: past it the warm-up is the measurement), PROC_CAP (150 s a process),
# REUSE_BUILD=1 (the programs an earlier call left in BUILD), JOBS (nproc), CXX (g++), CUDA_HOME /
# CUDA_INC / CUDA_LIB (the toolkit's), DRYRUN (a folder made by dryrun/setup.sh: its stand-in
# runtime replaces CUDA's, for a run on a machine with no GPU).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
CARRY=${CARRY:-$root/.carry/vs-rmm}
BVR=${BVR-$root/.carry/bench-vs-rmm}
OUT=${OUT:-$PWD/out}
BUILD=${BUILD:-/tmp/vs-rmm-build}
WORK=/tmp/vs-rmm-work
JOBS=${JOBS:-$(nproc)}
export JOBS
if [ -n "${QUICK:-}" ]; then
  TOTAL_S=${TOTAL_S:-240} SECOND_BUDGET=${SECOND_BUDGET:-20} GB_BUDGET=${GB_BUDGET:-20}
else
  TOTAL_S=${TOTAL_S:-470} SECOND_BUDGET=${SECOND_BUDGET:-150} GB_BUDGET=${GB_BUDGET:-60}
fi
[ -n "${SKIP_GBENCH:-}" ] && GB_BUDGET=0
BUILD_LIMIT=${BUILD_LIMIT:-240}
SLOW_S=${SLOW_S:-4}
LONE_S=${LONE_S:-15}
PRIMARY=${PRIMARY:-rmmrs rapids}
GROUP_BY=${GROUP_BY:-$([ -n "${QUICK:-}" ] && echo workload || echo resource)}
PROC_CAP=${PROC_CAP:-150}
RESERVE=15 # seconds kept for the tables and the log archive
T0=$SECONDS
T_END=$((T0 + TOTAL_S))

mkdir -p "$OUT"
rm -f "$OUT/run.log" "$OUT/comparison.md" "$OUT/vs_rmm.json" "$OUT/logs.tar.gz"
rm -rf "$WORK"
[ -n "${REUSE_BUILD:-}" ] && [ -f "$BUILD/build-status.txt" ] || { REUSE_BUILD= && rm -rf "$BUILD"; }
mkdir -p "$WORK/json/rmmrs" "$WORK/json/rapids" "$WORK/json/rmm2312" "$WORK/gbench" "$WORK/out" "$BUILD"
exec > >(tee "$OUT/run.log") 2>&1
stamp() { echo "== [$((SECONDS - T0)) s] $*"; }
min() { if [ "$1" -lt "$2" ]; then echo "$1"; else echo "$2"; fi; }

[ -f "$CARRY/MANIFEST.txt" ] || {
  echo "no carry folder at $CARRY (scripts/carry-vs-rmm.sh makes it; carry .carry/vs-rmm)"
  exit 2
}
if [ -n "$BVR" ] && [ ! -f "$BVR/harness/build.sh" ]; then
  echo "no 23.12 carry folder at $BVR: no 23.12 column"
  BVR=
fi
SECONDARY=${SECONDARY-$([ -n "$BVR" ] && [[ " $PRIMARY " != *" rmm2312 "* ]] && echo rmm2312)}
RUN_ENV=(RMM_RUNTIME=cuda)
if [ -n "${DRYRUN:-}" ]; then
  export CUDA_INC=$DRYRUN/include CUDA_LIB=$DRYRUN/lib
  RUN_ENV+=(LD_LIBRARY_PATH="$DRYRUN/lib" VSR_STANDIN_GIB=80)
fi

stamp "environment"
cat "$CARRY/MANIFEST.txt"
[ -n "$BVR" ] && head -3 "$BVR/MANIFEST.txt"
(nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used,clocks.sm,clocks.max.sm \
  --format=csv 2>&1 || echo "no nvidia-smi") | sed 's/^/  /'
echo "  $(${CXX:-g++} --version | head -1); $(nproc) cores; $(lscpu 2>/dev/null | grep -m1 'Model name' | sed 's/  */ /g')"
[ -n "${DRYRUN:-}" ] && echo "  DRY RUN on the stand-in runtime of $DRYRUN: the numbers mean nothing"

if [ -n "${REUSE_BUILD:-}" ]; then
  stamp "build: the one in $BUILD (REUSE_BUILD)"
else
  stamp "build (-j$JOBS, limit $BUILD_LIMIT s)"
  CARRY=$CARRY BUILD=$BUILD BVR=$BVR timeout -k 5 "$BUILD_LIMIT" bash "$here/build.sh" ||
    echo "build.sh: exit $? (124: over its time limit; what was built is used)"
fi
cat "$BUILD/logs/times.txt" 2>/dev/null
while read -r t s; do
  [ "$s" = FAILED ] || continue
  echo "--- $t FAILED; its log:"
  log=$BUILD/logs/$t.log
  [[ $t == bvr/* ]] && log=$BUILD/bvr/logs/$(basename "${t%.o}").log
  grep -m12 -E 'error|Error' "$log" 2>/dev/null || tail -12 "$log" 2>/dev/null
done <"$BUILD/build-status.txt"

declare -A EXE=([rmmrs]=$BUILD/vs_rmm_bench_rmmrs [rapids]=$BUILD/vs_rmm_bench_rapids
  [rmm2312]=$BUILD/bvr/perf_anchor_rmm)
declare -A GB_EXE=([rmmrs]=$BUILD/random_allocations_rmmrs [rapids]=$BUILD/random_allocations_rapids
  [rmm2312]=$BUILD/bvr/random_allocations_rmm)
declare -A NAME=([rmmrs]=rmm-rs [rapids]="RMM 26.10" [rmm2312]="RMM 23.12")
declare -A DEAD=() SKIPPED=()
for v in rmmrs rapids rmm2312; do
  [ -x "${EXE[$v]}" ] || DEAD[$v]="not built"
done
[ -z "$BVR" ] && DEAD[rmm2312]="no 23.12 carry folder"
read -r -a primary <<<"$PRIMARY"
read -r -a secondary <<<"$SECONDARY"
ARGS=(--slow-s "$SLOW_S")
[ -n "${QUICK:-}" ] && ARGS+=(--quick)

# What one group (a workload on a resource) takes on an H100, both primary builds together, in
# seconds (from the 23.12 harness's runs: RMM's pool and arena dominate); scaled by what the
# groups run so far took against their estimate, it tells how much time the secondary build
# may have.
declare -A EST=([w2:pool]=12 [w2:binning]=3 [w2:arena]=10 [w2:cuda_async]=5 [w2:cuda]=6
  [w4:pool]=9 [w4:binning]=4 [w4:arena]=6 [w4:cuda_async]=4 [w4:cuda]=4
  [w3:pool]=45 [w3:binning]=17 [w3:arena]=8 [w3:cuda_async]=16 [w3:cuda]=14
  [w1:pool]=30 [w1:binning]=6 [w1:arena]=45 [w1:cuda_async]=8 [w1:cuda]=15)

# One process: VARIANT WORKLOAD RESOURCE TIMEOUT. --deadline-s: no cell starts after it.
second_left=$SECOND_BUDGET
run_one() {
  local v=$1 w=$2 r=$3 t=$4 d rc
  local base=$WORK/out/$v-$w-${r//,/+} extra=()
  d=$((t - 15))
  [ "$d" -ge $((t * 3 / 5)) ] || d=$((t * 3 / 5))
  [ "$v" != rmm2312 ] && extra=(--lone-s "$LONE_S")
  echo "-- ${NAME[$v]} $w $r (timeout $t s)"
  env "${RUN_ENV[@]}" timeout -k 5 "$t" "${EXE[$v]}" --workloads "$w" --resources "$r" \
    --json "$WORK/json/$v/$w-${r//,/+}.json" --deadline-s "$d" "${ARGS[@]}" "${extra[@]}" \
    >"$base.out" 2>"$base.err"
  rc=$?
  grep -E '^(pool|binning|arena|cuda_async|cuda) ' "$base.out" | sed 's/^/   /'
  if [ $rc -ne 0 ]; then
    echo "   exit $rc$([ $rc -ge 124 ] && echo ' (timed out)'):" \
      "$(grep -v '^\[' "$base.err" | tail -2 | tr '\n' ' ')"
  fi
  if [ $rc -eq 3 ]; then
    DEAD[$v]="cannot reach a device: $(grep -v '^\[' "$base.err" | tail -1)"
  fi
  return 0
}
left() { echo $((T_END - RESERVE - SECONDS)); }
est() { # a group's estimate, scaled
  local w=${1%%:*} r e=0
  for r in ${1##*:}; do e=$((e + EST[$w:$r])); done
  echo $((e * scale / 100))
}
is_secondary() { [[ " ${secondary[*]} " == *" $1 "* ]]; }

per="a process per workload$([ "$GROUP_BY" = resource ] && echo " and resource")"
stamp "runs, alternating ($per): ${primary[*]}${secondary:+; then ${secondary[*]} with $SECOND_BUDGET s}"
groups=()
for w in w2 w4 w3 w1; do
  if [ "$GROUP_BY" = workload ]; then
    groups+=("$w:pool,binning,arena,cuda_async,cuda")
  else
    for r in pool binning arena cuda_async cuda; do groups+=("$w:$r"); done
  fi
done
n_groups=${#groups[@]}
scale=$([ -n "${QUICK:-}" ] && echo 10 || echo 100) # percent of EST
est_done=0 spent=0 i=0
for g in "${groups[@]}"; do
  w=${g%%:*} r=${g##*:}
  # the primary builds, their order rotating from group to group
  order=()
  for ((j = 0; j < ${#primary[@]}; j++)); do
    order+=("${primary[$(((i + j) % ${#primary[@]}))]}")
  done
  g0=$SECONDS
  for v in "${order[@]}"; do
    [ -n "${DEAD[$v]:-}" ] && continue
    # what this process may take: the time left less RMM's own benchmark, less 3 s for each
    # process still to come while that leaves 10 s
    rest=$((${#primary[@]} * (n_groups - i) - 1))
    t=$(min "$PROC_CAP" $(($(left) - GB_BUDGET - 3 * rest)))
    [ "$t" -ge 10 ] || t=$(min "$PROC_CAP" $(($(left) - GB_BUDGET)))
    if [ "$t" -lt 10 ]; then
      echo "-- ${NAME[$v]} $w $r: skipped, no time left"
      SKIPPED[$v]+="${SKIPPED[$v]:+, }$w ${r//,/+}"
      continue
    fi
    run_one "$v" "$w" "$r" "$t"
  done
  spent=$((spent + SECONDS - g0))
  est_done=$((est_done + $(est "${g//,/ }")))
  i=$((i + 1))
  # the secondary builds: what their allowance and the primary builds' estimated rest leave
  est_rest=0
  for h in "${groups[@]:$i}"; do est_rest=$((est_rest + $(est "${h//,/ }"))); done
  # scaled by what the groups so far took against their estimate (not below half of it)
  [ "$est_done" -gt 0 ] && est_rest=$((est_rest * (spent > est_done / 2 ? spent : est_done / 2) / est_done))
  for v in "${secondary[@]}"; do
    [ -n "${DEAD[$v]:-}" ] && continue
    t=$(min 60 "$(min "$second_left" $(($(left) - GB_BUDGET - est_rest)))")
    if [ "$t" -lt 10 ]; then
      echo "-- ${NAME[$v]} $w $r: skipped (allowance $second_left s of $SECOND_BUDGET; time left $(left) s)"
      SKIPPED[$v]+="${SKIPPED[$v]:+, }$w ${r//,/+}"
      continue
    fi
    t0=$SECONDS
    run_one "$v" "$w" "$r" "$t"
    second_left=$((second_left - (SECONDS - t0)))
  done
done

if [ "$GB_BUDGET" -gt 0 ]; then
  stamp "RMM's own random_allocations (google benchmark), alternating"
  cases="pool:10000:1 binning:10000:1 arena:10000:1 cuda_async:10000:1 pool:1000:64 binning:1000:64
    arena:1000:64 cuda_async:1000:64 binning:100000:1 pool:100000:1"
  [ -n "${QUICK:-}" ] && cases="pool:1000:1 binning:1000:1 arena:1000:1 cuda_async:1000:1"
  gb_end=$((T_END - RESERVE))
  k=0
  for c in $cases; do
    IFS=: read -r r n m <<<"$c"
    order=()
    for ((j = 0; j < ${#primary[@]}; j++)); do
      order+=("${primary[$(((k + j) % ${#primary[@]}))]}")
    done
    for v in "${order[@]}" "${secondary[@]}"; do
      exe=${GB_EXE[$v]}
      [ -x "$exe" ] || continue
      [[ ${DEAD[$v]:-} == "cannot reach"* ]] && continue
      t=$((gb_end - SECONDS))
      is_secondary "$v" && t=$(min "$t" "$second_left")
      if [ "$t" -lt 5 ]; then
        echo "  skipped ${NAME[$v]} $c: no time left"
        SKIPPED[$v]+="${SKIPPED[$v]:+, }random_allocations $c"
        continue
      fi
      t0=$SECONDS
      env "${RUN_ENV[@]}" timeout -k 5 "$t" "$exe" -r "$r" -n "$n" -m "$m" --benchmark_min_time=0.3s \
        --benchmark_out="$WORK/gbench/${v}__${r}__n${n}__m${m}.json" --benchmark_out_format=json \
        >"$WORK/out/gbench-$v-$r-$n-$m.out" 2>&1
      grep -E '^BM_|rror' "$WORK/out/gbench-$v-$r-$n-$m.out" | sed "s/^/  [${NAME[$v]}] /"
      is_secondary "$v" && second_left=$((second_left - (SECONDS - t0)))
    done
    k=$((k + 1))
  done
fi

stamp "comparison"
notes=()
for v in rmmrs rapids rmm2312; do
  [ -n "${DEAD[$v]:-}" ] && notes+=(--note "${NAME[$v]}: ${DEAD[$v]}")
  [ -n "${SKIPPED[$v]:-}" ] && notes+=(--note "${NAME[$v]}, not run for lack of time: ${SKIPPED[$v]}")
done
[ -n "${DRYRUN:-}" ] && notes+=(--note "dry run on a stand-in CUDA runtime: the numbers mean nothing")
python3 "$here/compare.py" --work "$WORK" --build-status "$BUILD/build-status.txt" \
  --json "$OUT/vs_rmm.json" "${notes[@]}" >"$OUT/comparison.md"
cat "$OUT/comparison.md"
cp -r "$BUILD/logs" "$WORK/build-logs"
cp "$BUILD/build-status.txt" "$WORK/"
[ -d "$BUILD/bvr/logs" ] && cp -r "$BUILD/bvr/logs" "$WORK/build-logs/bvr"
tar -C "$(dirname "$WORK")" -czf "$OUT/logs.tar.gz" "$(basename "$WORK")" 2>/dev/null
stamp "done: $OUT (comparison.md, vs_rmm.json, run.log, logs.tar.gz)"
