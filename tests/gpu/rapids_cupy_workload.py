"""A CuPy workload through RAPIDS's own RMM (scripts/gpu-preload-rapids.sh, part cupy).

    python rapids_cupy_workload.py [ITERS] [ALLOCATOR]

ALLOCATOR rmm (default): CuPy allocates through RAPIDS's `rmm.allocators.cupy.
rmm_cupy_allocator` with RAPIDS's default resource (no pool is set up:
`rmm.mr.get_current_device_resource()` stays what rmm starts with, a CudaMemoryResource,
i.e. cudaMalloc/cudaFree per buffer). ALLOCATOR cupy-raw: CuPy's own allocation without its
pool (`cupy.cuda.Memory(n)`, what `cupy.cuda.set_allocator(None)` uses: cudaMalloc/cudaFree
per buffer from CuPy's runtime binding), a control of whether an interposer sees the calls at all.

Each iteration draws 4 to 6 sizes, log-uniform between 1 KiB and 64 MiB, from a seeded
host RNG; allocates int64 arrays of those sizes; runs a few elementwise integer operations
(each makes temporaries) and reductions (sum, max) on each; and frees the arrays in a
shuffled order. Roughly 60 allocations an iteration, so the default 1000 iterations make
tens of thousands. Integer arithmetic wraps the same way in any order, so the checksum does
not depend on reduction order or on the allocator: it is identical with and without an
interposer.

stdout: `rmm <version> cupy <version>`, `rmm resource: <type name>`, `allocations <n> bytes
<total>`, `checksum <int>`. stderr: `time_per_iter_us <float>` (timed loop after a warm-up
of ITERS/10 iterations that also compiles CuPy's kernels).
"""
import math
import random
import sys
import time

import cupy as cp
import rmm
import rmm.mr
from rmm.allocators.cupy import rmm_cupy_allocator

KIB, MIB = 1024, 1024 * 1024
MASK = (1 << 64) - 1

iters = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
allocator = sys.argv[2] if len(sys.argv) > 2 else "rmm"

count = [0, 0]  # allocations, bytes


def counted(inner):
    def alloc(nbytes):
        count[0] += 1
        count[1] += nbytes
        return inner(nbytes)
    return alloc


if allocator == "rmm":
    cp.cuda.set_allocator(counted(rmm_cupy_allocator))
elif allocator == "cupy-raw":
    cp.cuda.set_allocator(counted(lambda n: cp.cuda.MemoryPointer(cp.cuda.Memory(n), 0)))
else:
    sys.exit(f"unknown allocator {allocator!r} (rmm or cupy-raw)")

print(f"rmm {rmm.__version__} cupy {cp.__version__} allocator {allocator}")
print(f"rmm resource: {type(rmm.mr.get_current_device_resource()).__name__}")
sys.stdout.flush()

LOG_LO, LOG_HI = math.log(KIB), math.log(64 * MIB)


def iteration(rng, i, acc):
    sizes = [int(math.exp(rng.uniform(LOG_LO, LOG_HI))) // 8 for _ in range(rng.randint(4, 6))]
    arrays = [cp.arange(n, dtype=cp.int64) for n in sizes]
    mult = rng.randrange(1, 1 << 31) | 1
    for j, a in enumerate(arrays):
        b = (a * mult + (i * 7 + j)) & 0xFFFFFFFF
        c = b ^ (b >> 7)
        d = c % 1009
        acc = acc + d.sum() * (j + 1) + d.max()
        del b, c, d
    order = list(range(len(arrays)))
    rng.shuffle(order)
    for k in order:
        arrays[k] = None
    return acc


def run(n, seed):
    rng = random.Random(seed)
    acc = cp.zeros((), dtype=cp.int64)
    for i in range(n):
        acc = iteration(rng, i, acc)
    return acc


run(max(1, iters // 10), seed=1)  # warm-up: kernel compilation, first allocations
cp.cuda.Device().synchronize()
count[0] = count[1] = 0
t0 = time.perf_counter()
acc = run(iters, seed=12345)
total = int(acc)  # synchronizes
cp.cuda.Device().synchronize()
dt = time.perf_counter() - t0

print(f"allocations {count[0]} bytes {count[1]}")
print(f"checksum {total & MASK} iters {iters}")
sys.stdout.flush()
print(f"time_per_iter_us {dt * 1e6 / iters:.3f}", file=sys.stderr)
