#!/usr/bin/env bash
# The LD_PRELOAD interposer on a GPU machine (no Rust needed there). Carry
# target/release/librmm_preload.so (built here with `cargo build --release --workspace`).
#  (a) builds tests/gpu/preload_loop.cu with nvcc against the shared cudart and runs it raw,
#      in its two modes (kernel-heavy, allocation-bound), raw and with LD_PRELOAD in every
#      RMM_PRELOAD_SYNC mode and resource: a table of µs/iteration and the check that every
#      checksum is identical;
#  (b) tests/gpu/preload_torch.py when PyTorch with CUDA is importable.
set -uo pipefail
cd "$(dirname "$0")/.."
lib="${RMM_PRELOAD_LIB:-$PWD/target/release/librmm_preload.so}"
iters="${ITERS:-1000}"
fail=0
[ -f "$lib" ] || { echo "missing $lib (carry target/release/librmm_preload.so)"; exit 2; }
if command -v nm >/dev/null; then
  # Read the list whole: grep -q closing the pipe early would fail the pipeline (pipefail).
  syms="$(nm -D --defined-only "$lib")"
  grep -q ' T cudaMalloc$' <<<"$syms" || { echo "$lib exports no cudaMalloc"; exit 2; }
fi

echo "== (a) CUDA loop: nvcc -cudart shared"
nvcc -O2 -cudart shared -o /tmp/preload_loop tests/gpu/preload_loop.cu || exit 2
ldd /tmp/preload_loop | grep cudart
for mode in kernels alloc; do
  echo "-- mode $mode ($iters iterations)"
  declare -A res=()
  run() {  # name, env...
    local name="$1"; shift
    local out
    out="$(env "$@" /tmp/preload_loop "$iters" "$mode" 2>/tmp/preload_loop.err)" || { echo "$name: FAILED"; cat /tmp/preload_loop.err; fail=1; }
    res["$name"]="$out"
    grep -E "allocations|time|deferred|warning|refused" /tmp/preload_loop.err | sed "s/^/    [$name] /"
  }
  names=(raw "preload default" "preload sync=device" "preload sync=0" "preload arena" "preload async")
  run raw RMM_PRELOAD_UNUSED=1
  run "preload default" LD_PRELOAD="$lib" RMM_PRELOAD_STATS=1
  run "preload sync=device" LD_PRELOAD="$lib" RMM_PRELOAD_STATS=1 RMM_PRELOAD_SYNC=device
  run "preload sync=0" LD_PRELOAD="$lib" RMM_PRELOAD_STATS=1 RMM_PRELOAD_SYNC=0
  run "preload arena" LD_PRELOAD="$lib" RMM_PRELOAD_STATS=1 RMM_PRELOAD_RESOURCE=arena RMM_PRELOAD_INITIAL_POOL_SIZE=1GiB
  run "preload async" LD_PRELOAD="$lib" RMM_PRELOAD_STATS=1 RMM_PRELOAD_RESOURCE=async
  raw_us="$(awk '{print $6}' <<<"${res[raw]}")"
  printf '%-22s %12s %10s  %s\n' configuration "µs/iter" speedup checksum
  sums=""
  for name in "${names[@]}"; do
    line="${res[$name]:-}"
    us="$(awk '{print $6}' <<<"$line")"; sum="$(awk '{print $8}' <<<"$line")"; bad="$(awk '{print $4}' <<<"$line")"
    [ "$bad" = 0 ] || { echo "$name: bad result ($line)"; fail=1; }
    speed="$(awk -v a="$raw_us" -v b="$us" 'BEGIN{ if (b > 0) printf "%.1fx", a / b }')"
    printf '%-22s %12s %10s  %s\n' "$name" "$us" "$speed" "$sum"
    sums="$sums$sum"$'\n'
  done
  if [ "$(sort -u <<<"$sums" | grep -c .)" = 1 ]; then echo "checksums identical"; else echo "CHECKSUMS DIFFER"; fail=1; fi
done

echo "== (b) PyTorch"
if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  python3 -c 'import torch, os; p = os.path.dirname(torch.__file__); print("torch", torch.__version__, "cuda", torch.version.cuda)'
  # Which libcudart PyTorch uses, and whether libtorch_cuda calls cudaMalloc through the
  # dynamic symbol (an undefined 'U cudaMalloc' import: interposable).
  tdir="$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')"
  for so in "$tdir"/libc10_cuda.so "$tdir"/libtorch_cuda.so; do
    [ -f "$so" ] && { printf '%s: ' "$(basename "$so")"; nm -D "$so" | grep -E ' U cudaMalloc(@|$)' || echo "no dynamic cudaMalloc import"; }
  done
  ldd "$tdir/libtorch_cuda.so" 2>/dev/null | grep cudart
  RMM_PRELOAD_LIB="$lib" python3 tests/gpu/preload_torch.py || fail=1
else
  echo "PyTorch with CUDA not available: skipped"
fi
exit $fail
