"""Lifetimes: reference cycles through resources are collected and their memory freed."""

import gc
import weakref

import pytest

import rmm
import rmm.mr as mr

MiB = 1 << 20


@pytest.fixture(autouse=True)
def _collect():
    gc.collect()
    yield
    gc.collect()


def collected(ref):
    gc.collect()
    return ref() is None


class Owner:
    """Holds a CallbackMemoryResource whose callbacks are its own bound methods (a cycle
    through librmm.so's callback resource) and buffers allocated from it."""

    def __init__(self, upstream):
        self.upstream = upstream
        self.calls = []
        self.mr = mr.CallbackMemoryResource(self.allocate, self.deallocate)
        self.buffers = [rmm.DeviceBuffer(size=1000, mr=self.mr)]

    def allocate(self, size, stream):
        self.calls.append(("allocate", size))
        return self.upstream.allocate(size, stream)

    def deallocate(self, ptr, size, stream):
        self.calls.append(("deallocate", size))
        self.upstream.deallocate(ptr, size, stream)


def test_cycle_through_callback_bound_methods():
    tracking = mr.TrackingResourceAdaptor(mr.CudaMemoryResource())
    owner = Owner(tracking)
    owner.buffers.append(rmm.DeviceBuffer(size=3000, mr=owner.mr))
    # DeviceBuffers ask for their exact size, as RMM 26.06's do: 1000 + 3000.
    assert tracking.get_allocated_bytes() == 4000
    refs = [weakref.ref(owner), weakref.ref(owner.mr), weakref.ref(owner.buffers[0])]
    del owner
    gc.collect()
    assert [r() for r in refs] == [None, None, None]
    # the buffers' memory went back through the Python deallocate function
    assert tracking.get_allocated_bytes() == 0


def test_cycle_through_callback_closure_and_statistics():
    stats = mr.StatisticsResourceAdaptor(mr.CudaMemoryResource())
    box = {}

    def allocate(size, stream):
        box["last"] = size  # the closure refers to `box`, which holds the resource
        return stats.allocate(size, stream)

    def deallocate(ptr, size, stream):
        stats.deallocate(ptr, size, stream)

    box["mr"] = mr.CallbackMemoryResource(allocate, deallocate)
    box["adaptor"] = mr.LimitingResourceAdaptor(box["mr"], 10 * MiB)
    box["buf"] = rmm.DeviceBuffer(size=MiB, mr=box["adaptor"])
    box["self"] = box
    assert stats.allocation_counts.current_bytes == MiB
    ref = weakref.ref(box["mr"])
    del box, allocate, deallocate
    gc.collect()
    assert ref() is None
    assert stats.allocation_counts.current_bytes == 0
    assert stats.allocation_counts.current_count == 0


def test_callback_resource_without_cycle_goes_at_once():
    base = mr.CudaMemoryResource()
    cb = mr.CallbackMemoryResource(base.allocate, base.deallocate)
    ref = weakref.ref(cb)
    gc.disable()
    try:
        del cb
        assert ref() is None  # reference counting alone: no hidden self-reference
    finally:
        gc.enable()


def test_cycle_through_failure_callback():
    stats = mr.StatisticsResourceAdaptor(mr.CudaMemoryResource())

    class Retry:
        def __init__(self):
            self.mr = mr.FailureCallbackResourceAdaptor(
                mr.LimitingResourceAdaptor(stats, MiB), self.on_oom
            )
            self.buf = rmm.DeviceBuffer(size=MiB // 2, mr=self.mr)

        def on_oom(self, nbytes):
            return False

    r = Retry()
    with pytest.raises(MemoryError):
        r.mr.allocate(MiB)
    ref = weakref.ref(r)
    del r
    assert collected(ref)
    assert stats.allocation_counts.current_bytes == 0


def test_cycle_through_adaptor_chain():
    stats = mr.StatisticsResourceAdaptor(mr.CudaMemoryResource())
    pool = mr.PoolMemoryResource(stats, initial_pool_size=MiB)
    tracking = mr.TrackingResourceAdaptor(pool)
    limiting = mr.LimitingResourceAdaptor(tracking, 8 * MiB)
    # cycles: the top adaptor refers to itself and to a buffer that refers to it; the
    # pool refers to the top of its own chain
    limiting.me = limiting
    limiting.buf = rmm.DeviceBuffer(size=3 * MiB, mr=limiting)
    pool.top = limiting
    assert tracking.get_allocated_bytes() == 3 * MiB
    assert stats.allocation_counts.current_bytes >= 3 * MiB
    refs = [weakref.ref(o) for o in (pool, tracking, limiting, limiting.buf)]
    del pool, tracking, limiting
    gc.collect()
    assert [r() for r in refs] == [None] * 4
    # the pool gave its upstream memory back when it went
    assert stats.allocation_counts.current_bytes == 0


def test_binning_bins_in_a_cycle():
    stats = mr.StatisticsResourceAdaptor(mr.CudaMemoryResource())
    binning = mr.BinningMemoryResource(stats)
    fixed = mr.FixedSizeMemoryResource(stats, block_size=4096, blocks_to_preallocate=4)
    binning.add_bin(4096, fixed)
    fixed.owner = binning
    binning.buf = rmm.DeviceBuffer(size=100, mr=binning)
    refs = [weakref.ref(binning), weakref.ref(fixed)]
    del binning, fixed
    gc.collect()
    assert [r() for r in refs] == [None, None]
    assert stats.allocation_counts.current_bytes == 0


def test_registry_keeps_the_resource_until_replaced():
    stats = mr.StatisticsResourceAdaptor(mr.CudaMemoryResource())
    tracking = mr.TrackingResourceAdaptor(stats)
    tracking.me = tracking
    mr.set_current_device_resource(tracking)
    ref = weakref.ref(tracking)
    del tracking
    assert not collected(ref)  # the registry holds it (as RMM)
    buf = rmm.DeviceBuffer(size=100)
    assert stats.allocation_counts.current_bytes == 100  # the exact size, as RMM 26.06's
    mr.set_current_device_resource(mr.CudaMemoryResource())
    del buf
    assert collected(ref)
    assert stats.allocation_counts.current_bytes == 0


def test_callback_resource_used_from_c_after_collection():
    # The C resource outlives the Python object (an adaptor made in C keeps it): calls fail
    # cleanly with ReferenceError instead of reaching freed Python objects.
    base = mr.CudaMemoryResource()
    cb = mr.CallbackMemoryResource(base.allocate, base.deallocate)
    from rmm import _ffi

    tracking = _ffi.tracking_create(cb._handle)
    del cb
    gc.collect()
    with pytest.raises(RuntimeError, match="garbage collected"):
        _ffi.allocate(tracking, 100)
    tracking.release()
