#!/usr/bin/env bash
# Where does bench-vs-rmm's W3 time go, thread by thread? Builds two variants of the
# harness's perf_anchor.cpp (from the carried harness, .carry/bench-vs-rmm) against the
# carried rmm-rs headers and librmm.so: each W3 thread also prints when it saw the start
# signal and how long its own steps took; the second variant runs 200 000 steps per thread
# instead of 50 000 (is a run's aggregate set by per-run warm-up, or by its slowest
# thread?). Then runs W3 of the pool and binning at 1 and 8 threads with each.
#   bash tests-gpu/perf_anchor_threads.sh          (on the GPU machine; RMM_RUNTIME=cuda)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
C=$root/.carry/bench-vs-rmm
cuda=${CUDA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")}
b=/tmp/perf-anchor-threads; mkdir -p $b
python3 - "$C/harness/perf_anchor.cpp" $b <<'PY'
import re, sys
src, out = sys.argv[1], sys.argv[2]
s = open(src).read()
def sub(old, new):
    global s
    assert old in s, old
    s = s.replace(old, new)
sub("""      while (!go.load(std::memory_order_acquire)) {
        std::this_thread::yield();
      }""", """      while (!go.load(std::memory_order_acquire)) {
        std::this_thread::yield();
      }
      starts_dbg[i] = clock_type::now();""")
sub("  std::vector<clock_type::time_point> ends(t);",
    "  std::vector<clock_type::time_point> ends(t);\n  std::vector<clock_type::time_point> starts_dbg(t);")
sub("""  sample s;
  s.seconds = std::chrono::duration<double>(*std::max_element(ends.begin(), ends.end()) - t0).count();""",
    """  sample s;
  for (std::size_t i = 0; i < t; ++i) {
    std::fprintf(stderr, "  thread %zu: start +%.3f ms, steps %.3f ms\\n", i,
                 std::chrono::duration<double, std::milli>(starts_dbg[i] - t0).count(),
                 std::chrono::duration<double, std::milli>(ends[i] - starts_dbg[i]).count());
  }
  s.seconds = std::chrono::duration<double>(*std::max_element(ends.begin(), ends.end()) - t0).count();""")
open(f"{out}/pa_threads.cpp", "w").write(s)
w3 = re.compile(r'if \(w == "w3"\) \{ n = cuda \? 1.000 : async \? 5.000 : 50.000; \}')
assert w3.search(s)
open(f"{out}/pa_threads200.cpp", "w").write(w3.sub('if (w == "w3") { n = cuda ? 1000 : async ? 5000 : 200000; }', s))
PY
for v in pa_threads pa_threads200; do
  g++ -std=c++17 -O3 -DNDEBUG -pthread -I"$C/rmmrs/include" -isystem "$cuda/include" "$b/$v.cpp" \
    -L"$C/rmmrs/lib" -lrmm -L"$cuda/lib64" -L"$cuda/targets/x86_64-linux/lib" -lcudart -ldl \
    -Wl,-rpath,"$C/rmmrs/lib" -o "$b/$v" &
done
wait
for v in pa_threads pa_threads200; do
  echo "-- $v"
  RMM_RUNTIME=${RMM_RUNTIME:-cuda} "$b/$v" --resources pool,binning --workloads w3 --threads 1,8 2>&1
done
