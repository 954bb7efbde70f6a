# Sourced by tests-gpu/evidence_*.sh with NAME set (the work folder /tmp/gpu-$NAME and the
# log $OUT/$NAME.log): the project root, CUDA's folder, the log, bench-vs-rmm's perf_anchor
# built in the background (wait on $pab_pid), and the C programs of tests-gpu/ built against
# the carried prefix into $W.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
R=$PWD C=$R/.carry
for d in /usr/local/cuda/bin /usr/local/cuda-*/bin; do [ -d "$d" ] && PATH="$PATH:$d"; done
export PATH
cuda=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")
W=/tmp/gpu-$NAME; rm -rf "$W"; mkdir -p "$W"
OUT=${OUT:-/tmp/gpu-$NAME-out}; mkdir -p "$OUT"
exec > >(tee "$OUT/$NAME.log") 2>&1
stamp() { echo "== [$SECONDS s] $*"; }
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv
stamp "builds"
(CARRY=$C/bench-vs-rmm BUILD=/tmp/pab JOBS=8 bash "$C/bench-vs-rmm/harness/build.sh" >"$W/pab-build.log" 2>&1
  echo "perf_anchor build: $?") &
pab_pid=$!
inc=(-I"$C/prefix/include" -I"$cuda/include")
lib=(-L"$C/prefix/lib" -lrmm -Wl,-rpath,"$C/prefix/lib")
gcc -O2 "${inc[@]}" tests-gpu/vmm_release.c "${lib[@]}" -L"$cuda/lib64" \
  -L"$cuda/targets/x86_64-linux/lib" -lcudart -o "$W/vmm_release" || echo "vmm_release build failed"
gcc -O2 "${inc[@]}" tests-gpu/fragment_snapshot.c "${lib[@]}" -o "$W/fragment_snapshot" ||
  echo "fragment_snapshot build failed"
