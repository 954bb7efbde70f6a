"""A cuDF dataframe workload through RAPIDS's own RMM (scripts/gpu-preload-cudf.sh, part bench).

    python cudf_workload.py [default|pool] [ROWS]

MODE default: RAPIDS's default resource (rmm's CudaMemoryResource: one cudaMalloc/cudaFree per
buffer, from the CUDA runtime that librmm/libcudf link statically). MODE pool: first
`rmm.reinitialize(pool_allocator=True)` (RAPIDS's pool over that resource). cuDF also routes
CuPy and Numba through rmm, so every device buffer of the work comes from that resource.

ROWS (default 10**7) rows: int64 `key` (10**5 distinct values), float64 `v`, int64 `w` and a
unique int64 `id`, drawn on the host from a seeded NumPy generator; a second frame of 10**5
rows (the even keys below 2*10**5, shuffled, with float64 `r`) to merge with. Steps, each
timed after a device synchronize: build (host to device), groupby (sum, mean, count of `v`,
sum of `w`, by `key`), merge (inner on `key`), sort (sort_values by `v`, `id`), digest (sorts
the results by unique columns, copies them to the host and hashes them). A warm-up pass of
the same steps on 10**5 rows comes first, so that the timed pass pays no kernel loading.

Every `v` and `r` is a multiple of 1/4 below 2**10, so every float sum is exact whatever the
order of addition, and each mean is one IEEE division of such a sum: the digests are
identical on every run, allocator and interposer, or something is wrong.

stdout: `cudf <version> rmm <version> pandas <version>`, `rmm resource: <type name>`, then
`digest <name> <value>` lines (groupby, merge, sort, and their row counts). stderr:
`step <name> <seconds>` for each timed step and `total <seconds>` (the timed pass without the
digest step).
"""
import hashlib
import sys
import time

mode = sys.argv[1] if len(sys.argv) > 1 else "default"
rows = int(float(sys.argv[2])) if len(sys.argv) > 2 else 10**7
if mode not in ("default", "pool"):
    sys.exit(f"unknown mode {mode!r} (default or pool)")

t_import = time.perf_counter()
import cupy as cp  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import rmm  # noqa: E402
import rmm.mr  # noqa: E402

import cudf  # noqa: E402

t_import = time.perf_counter() - t_import

if mode == "pool":
    rmm.reinitialize(pool_allocator=True)

NKEYS = 10**5


def sync():
    cp.cuda.runtime.deviceSynchronize()


def make_frames(n, seed):
    rng = np.random.default_rng(seed)
    left = {
        "key": rng.integers(0, NKEYS, n, dtype=np.int64),
        "v": rng.integers(0, 4 * 1024, n, dtype=np.int64).astype(np.float64) / 4.0,
        "w": rng.integers(-(10**6), 10**6, n, dtype=np.int64),
        "id": np.arange(n, dtype=np.int64),
    }
    nright = min(NKEYS, max(n // 100, 1000))
    right = {
        "key": rng.permutation(np.arange(0, 2 * nright, 2, dtype=np.int64)),
        "r": rng.integers(0, 4 * 1024, nright, dtype=np.int64).astype(np.float64) / 4.0,
    }
    return left, right


def h(*arrays):
    d = hashlib.sha256()
    for a in arrays:
        d.update(np.ascontiguousarray(a).tobytes())
    return d.hexdigest()[:16]


def run(n, seed):
    left_h, right_h = make_frames(n, seed)
    times = {}
    sync()

    t = time.perf_counter()
    left = cudf.DataFrame(left_h)
    right = cudf.DataFrame(right_h)
    sync()
    times["build"] = time.perf_counter() - t

    t = time.perf_counter()
    g = left.groupby("key").agg({"v": ["sum", "mean", "count"], "w": "sum"})
    sync()
    times["groupby"] = time.perf_counter() - t

    t = time.perf_counter()
    m = left.merge(right, on="key", how="inner")
    sync()
    times["merge"] = time.perf_counter() - t

    t = time.perf_counter()
    s = left.sort_values(["v", "id"])
    sync()
    times["sort"] = time.perf_counter() - t

    t = time.perf_counter()
    g = g.sort_index()
    gk = g.index.to_numpy()
    gv = g[("v", "sum")].to_numpy()
    gm = np.round(g[("v", "mean")].to_numpy(), 9)
    gc = g[("v", "count")].to_numpy().astype(np.int64)
    gw = g[("w", "sum")].to_numpy()
    m = m.sort_values("id")
    mk, mi, mv, mr = (m[c].to_numpy() for c in ("key", "id", "v", "r"))
    sid = s["id"].to_numpy()
    sv = s["v"].to_numpy()
    digests = {
        "groupby_rows": str(len(gk)),
        "groupby": h(gk, gv, gm, gc, gw),
        "groupby_v_sum": repr(float(gv.sum())),
        "groupby_count_sum": str(int(gc.sum())),
        "merge_rows": str(len(mi)),
        "merge": h(mk, mi, mv, mr),
        "merge_r_sum": repr(float(mr.sum())),
        "sort_rows": str(len(sid)),
        "sort": h(sid, sv),
    }
    sync()
    times["digest"] = time.perf_counter() - t
    del left, right, g, m, s
    return digests, times


print(f"cudf {cudf.__version__} rmm {rmm.__version__} pandas {pd.__version__} mode {mode} rows {rows}")
print(f"rmm resource: {type(rmm.mr.get_current_device_resource()).__name__}")
sys.stdout.flush()

t = time.perf_counter()
run(min(rows, 10**5), 1)  # warm-up: context, kernel loading
t_warm = time.perf_counter() - t

digests, times = run(rows, 42)
for k, v in digests.items():
    print(f"digest {k} {v}")
print(f"step import {t_import:.4f}", file=sys.stderr)
print(f"step warmup {t_warm:.4f}", file=sys.stderr)
for k, v in times.items():
    print(f"step {k} {v:.4f}", file=sys.stderr)
total = sum(v for k, v in times.items() if k != "digest")
print(f"total {total:.4f}", file=sys.stderr)
