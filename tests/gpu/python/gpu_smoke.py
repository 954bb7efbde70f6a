"""GPU smoke test of the Python package with the libraries RMM users pair it with.

Run on a GPU machine after installing the wheel (RMM_RUNTIME=cuda):
    python tests/gpu/python/gpu_smoke.py   (from a folder outside python/, not importing the sources)
Each part prints one line `<part>: ok ...` or `<part>: FAILED ...` (or `skipped` when its
library is absent); the last line counts them. Exit status 1 when a part failed.
"""

import os
import sys
import traceback

os.environ.setdefault("RMM_RUNTIME", "cuda")

import rmm  # noqa: E402
import rmm.mr  # noqa: E402
import rmm.statistics  # noqa: E402

results = {"ok": 0, "failed": 0, "skipped": 0}


def part(name):
    def wrap(fn):
        try:
            detail = fn()
        except ImportError as e:
            results["skipped"] += 1
            print(f"{name}: skipped ({e})")
        except Exception:  # noqa: BLE001 - report every failure and go on
            results["failed"] += 1
            print(f"{name}: FAILED")
            traceback.print_exc()
        else:
            results["ok"] += 1
            print(f"{name}: ok {detail or ''}")
        return fn

    return wrap


def fresh_pool():
    rmm.reinitialize(pool_allocator=True, initial_pool_size="256MiB")
    return rmm.mr.get_current_device_resource()


@part("DeviceBuffer round trip")
def _():
    fresh_pool()
    data = bytes(range(256)) * 4096
    buf = rmm.DeviceBuffer.to_device(data)
    assert buf.tobytes() == data
    return f"{buf.size} bytes, resource {type(rmm.mr.get_current_device_resource()).__name__}"


@part("CuPy with rmm_cupy_allocator")
def _():
    import cupy

    from rmm.allocators.cupy import rmm_cupy_allocator

    fresh_pool()
    rmm.statistics.enable_statistics()
    cupy.cuda.set_allocator(rmm_cupy_allocator)
    try:
        a = cupy.arange(1 << 20, dtype=cupy.float32)
        b = (a * 2).sum()
        stream = cupy.cuda.Stream(non_blocking=True)
        with stream:
            c = cupy.ones((512, 512), dtype=cupy.float64) @ cupy.ones((512, 512))
        stream.synchronize()
        stats = rmm.statistics.get_statistics()
        assert float(b) == float((1 << 20) * ((1 << 20) - 1))
        assert float(c[0, 0]) == 512.0
        assert stats.total_count >= 3, stats
        return f"sum ok, matmul on a stream ok, {stats.total_count} allocations seen by statistics"
    finally:
        cupy.cuda.set_allocator(None)
        rmm.mr.set_current_device_resource(rmm.mr.CudaMemoryResource())


@part("Numba with RMMNumbaManager")
def _():
    import numpy as np

    if not hasattr(np, "row_stack"):
        # numba-cuda 0.30 refers to np.row_stack, gone in NumPy 2.5 (see numba_kernels.py).
        np.row_stack = np.vstack
    from numba import cuda

    from rmm.allocators.numba import RMMNumbaManager

    fresh_pool()
    cuda.set_memory_manager(RMMNumbaManager)

    @cuda.jit
    def twice(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] *= 2

    import numpy as np

    host = np.arange(1 << 16, dtype=np.float32)
    dev = cuda.to_device(host)
    twice[(host.size + 255) // 256, 256](dev)
    out = dev.copy_to_host()
    assert (out == host * 2).all()
    return f"kernel over {host.size} floats ok"


@part("PyTorch with rmm_torch_allocator")
def _():
    import torch

    from rmm.allocators.torch import rmm_torch_allocator

    if rmm_torch_allocator is None:
        raise ImportError("rmm_torch_allocator is None (no CUDA torch)")
    fresh_pool()
    stats = rmm.mr.StatisticsResourceAdaptor(rmm.mr.get_current_device_resource())
    rmm.mr.set_current_device_resource(stats)
    torch.cuda.memory.change_current_allocator(rmm_torch_allocator)
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)
    ).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(1024, 256, device="cuda")
    y = torch.randint(0, 10, (1024,), device="cuda")
    for _ in range(20):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    torch.cuda.synchronize()
    counts = stats.allocation_counts
    assert counts.total_count > 0, counts

    # rmm.allocators.torch's counters (PyTorch's own memory_stats() refuses a pluggable
    # allocator) agree with the statistics adaptor, which saw only PyTorch's allocations.
    import rmm.allocators.torch as rt

    s = rt.memory_stats()
    assert s["allocation.all.allocated"] == counts.total_count, (s, counts)
    assert s["allocation.all.current"] == counts.current_count, (s, counts)
    assert s["allocated_bytes.all.current"] == counts.current_bytes, (s, counts)
    assert s["allocated_bytes.all.peak"] == counts.peak_bytes, (s, counts)
    assert rt.memory_allocated() == rt.memory_allocated(torch.device("cuda", 0))
    assert rt.memory_allocated("cuda:0") == counts.current_bytes
    assert rt.max_memory_allocated(torch.device("cuda")) == counts.peak_bytes
    rt.reset_peak_memory_stats()
    assert rt.max_memory_allocated() == rt.memory_allocated()
    try:
        torch.cuda.memory_stats()
        own = "torch.cuda.memory_stats() works too"
    except Exception as e:  # noqa: BLE001 - a pluggable allocator has no stats of its own
        own = f"torch.cuda.memory_stats(): {(str(e).splitlines() or [type(e).__name__])[0][:80]}"

    # The memory history sees PyTorch's allocations, with native stacks.
    rmm.statistics.record_memory_history(stacks=True)
    z = torch.zeros(1 << 20, device="cuda")
    del z
    torch.cuda.synchronize()
    snap = rmm.statistics.memory_snapshot()
    rmm.statistics.record_memory_history(enabled=False)
    acts = [(e["action"], e["size"]) for e in snap["events"]]
    assert ("allocate", 4 << 20) in acts and ("free", 4 << 20) in acts, acts
    assert all(isinstance(e["frames"], list) and e["frames"] for e in snap["events"]), acts
    return (
        f"20 training steps, loss {loss.item():.4f}, {counts.total_count} allocations seen; "
        f"peak {s['allocated_bytes.all.peak']} bytes; {len(acts)} events recorded; {own}"
    )


print(f"gpu-smoke: {results['ok']} passed, {results['failed']} failed, {results['skipped']} skipped")
sys.exit(1 if results["failed"] else 0)
