"""Numba kernels with rmm as Numba's memory manager, on a GPU.

Run with ``NUMBA_CUDA_MEMORY_MANAGER=rmm.allocators.numba`` (Numba imports the module and
uses its ``_numba_memory_manager``) or with ``--set`` (``cuda.set_memory_manager``). A
statistics adaptor over a pool shows that Numba's device arrays come from rmm.
``--plain`` runs the same kernels without rmm, to tell Numba's own problems from ours.
"""

import sys

import numpy as np

if not hasattr(np, "row_stack"):
    # numba-cuda 0.30 still refers to np.row_stack, which NumPy 2.5 removed (an alias of
    # vstack since NumPy 2.0): restore the alias so Numba itself can compile kernels.
    np.row_stack = np.vstack
    print("note: NumPy", np.__version__, "has no row_stack; aliased to vstack for numba-cuda")

plain = "--plain" in sys.argv
if not plain:
    import rmm

    rmm.reinitialize(pool_allocator=True, initial_pool_size="1GiB")
    stats = rmm.mr.StatisticsResourceAdaptor(rmm.mr.get_current_device_resource())
    rmm.mr.set_current_device_resource(stats)

from numba import cuda  # noqa: E402

if "--set" in sys.argv:
    from rmm.allocators.numba import RMMNumbaManager

    cuda.set_memory_manager(RMMNumbaManager)


@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@cuda.reduce
def total(a, b):
    return a + b


n = 1 << 20
x = np.arange(n, dtype=np.float32)
y = np.ones(n, dtype=np.float32)
stream = cuda.stream()
dx = cuda.to_device(x, stream=stream)
dy = cuda.to_device(y, stream=stream)
dout = cuda.device_array(n, dtype=np.float32, stream=stream)
saxpy[(n + 255) // 256, 256, stream](np.float32(2.0), dx, dy, dout)
res = dout.copy_to_host(stream=stream)
stream.synchronize()
assert np.array_equal(res, 2 * x + y)
s = total(dout)
assert abs(s - float((2 * x + y).astype(np.float64).sum())) / s < 1e-5
for _ in range(200):  # churn: many short-lived device arrays
    t = cuda.device_array(4096, dtype=np.float64)
    del t
ctx = cuda.current_context()
print("memory manager:", type(ctx.memory_manager).__name__)
if not plain:
    c = stats.allocation_counts
    print(f"rmm saw {c.total_count} allocations ({c.total_bytes} bytes), {c.current_count} live")
    assert c.total_count >= 203, "Numba's allocations did not go through rmm"
print("numba kernels ok")
