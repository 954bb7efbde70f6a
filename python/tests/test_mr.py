import gc
import weakref

import pytest

import rmm
import rmm.mr as mr
from rmm.pylibrmm.stream import Stream

KiB = 1024
MiB = 1024 * KiB


def cuda():
    return mr.CudaMemoryResource()


RESOURCES = [
    ("cuda", lambda: mr.CudaMemoryResource()),
    ("managed", lambda: mr.ManagedMemoryResource()),
    ("pool", lambda: mr.PoolMemoryResource(cuda(), 1 * MiB, 8 * MiB)),
    ("pool-default", lambda: mr.PoolMemoryResource(cuda(), "1MiB")),
    ("statistics", lambda: mr.StatisticsResourceAdaptor(cuda())),
    ("limiting", lambda: mr.LimitingResourceAdaptor(cuda(), 4 * MiB)),
    ("tracking", lambda: mr.TrackingResourceAdaptor(cuda())),
    ("binning", lambda: mr.BinningMemoryResource(cuda(), 8, 14)),
    ("fixed", lambda: mr.FixedSizeMemoryResource(cuda(), 64 * KiB, 4)),
    ("arena", lambda: mr.ArenaMemoryResource(cuda(), 4 * MiB)),
    ("async", lambda: mr.CudaAsyncMemoryResource()),
    ("prefetch", lambda: mr.PrefetchResourceAdaptor(mr.ManagedMemoryResource())),
    ("failure-callback", lambda: mr.FailureCallbackResourceAdaptor(cuda(), lambda n: False)),
]


@pytest.mark.parametrize("name,make", RESOURCES, ids=[r[0] for r in RESOURCES])
@pytest.mark.parametrize("size", [0, 1, 1000, 60 * KiB])
def test_allocate_deallocate(name, make, size):
    r = make()
    assert isinstance(r, mr.DeviceMemoryResource)
    p = r.allocate(size)
    assert isinstance(p, int)
    if size:
        assert p != 0 and p % 256 == 0
    r.deallocate(p, size)


@pytest.mark.parametrize("name,make", RESOURCES, ids=[r[0] for r in RESOURCES])
def test_device_buffer_on_each(name, make):
    r = make()
    b = rmm.DeviceBuffer(size=100, mr=r)
    b.copy_from_host(bytes(range(100)))
    assert b.tobytes() == bytes(range(100))
    assert b.mr is r


def test_allocate_on_stream():
    r = mr.PoolMemoryResource(cuda(), MiB)
    s = Stream()
    p = r.allocate(1000, s)
    r.deallocate(p, 1000, s)
    s.synchronize()


def test_pool_sizes():
    pool = mr.PoolMemoryResource(cuda(), initial_pool_size="2MiB", maximum_pool_size=4 * MiB)
    assert pool.pool_size() == 2 * MiB
    assert pool.get_upstream().__class__ is mr.CudaMemoryResource
    stats = pool.pool_stats()
    assert stats["maximum_pool_size"] == 4 * MiB


def test_pool_out_of_memory_message():
    pool = mr.PoolMemoryResource(cuda(), MiB, 2 * MiB)
    with pytest.raises(MemoryError) as info:
        pool.allocate(8 * MiB)
    assert isinstance(info.value, rmm.RMMError)
    msg = str(info.value)
    assert str(8 * MiB) in msg
    assert "pool" in msg and str(MiB) in msg


def test_limiting_adaptor():
    lim = mr.LimitingResourceAdaptor(cuda(), allocation_limit=MiB)
    assert lim.get_allocation_limit() == MiB
    p = lim.allocate(1000)
    assert lim.get_allocated_bytes() == 1024
    with pytest.raises(MemoryError):
        lim.allocate(MiB)
    lim.deallocate(p, 1000)
    assert lim.get_allocated_bytes() == 0


def test_statistics_adaptor():
    st = mr.StatisticsResourceAdaptor(cuda())
    a = st.allocate(1000)
    b = st.allocate(24)
    c = st.allocation_counts
    assert (c.current_bytes, c.current_count) == (1024, 2)
    st.deallocate(b, 24)
    c = st.allocation_counts
    assert (c.current_bytes, c.current_count, c.peak_bytes, c.peak_count) == (1000, 1, 1024, 2)
    assert (c.total_bytes, c.total_count) == (1024, 2)
    st.push_counters()
    d = st.allocate(10)
    top = st.pop_counters()
    assert (top.current_bytes, top.current_count) == (10, 1)
    st.deallocate(d, 10)
    st.deallocate(a, 1000)
    assert st.allocation_counts.current_bytes == 0
    with pytest.raises(IndexError, match="cannot pop the last counter pair"):
        st.pop_counters()


def test_tracking_adaptor():
    tr = mr.TrackingResourceAdaptor(cuda(), capture_stacks=False)
    p = tr.allocate(300)
    assert tr.get_allocated_bytes() == 300
    assert isinstance(tr.get_outstanding_allocations_str(), str)
    tr.log_outstanding_allocations()
    tr.deallocate(p, 300)
    assert tr.get_allocated_bytes() == 0


def test_binning_add_bin():
    b = mr.BinningMemoryResource(cuda())
    fixed = mr.FixedSizeMemoryResource(cuda(), 4096)
    b.add_bin(4096, fixed)
    b.add_bin(65536)
    assert b.bin_mrs == [fixed]
    for size in (100, 4096, 5000, MiB):
        p = b.allocate(size)
        b.deallocate(p, size)


def test_fixed_size_rejects_larger():
    f = mr.FixedSizeMemoryResource(cuda(), block_size=4096, blocks_to_preallocate=2)
    assert f.get_block_size() == 4096
    with pytest.raises(MemoryError):
        f.allocate(8192)


def test_callback_memory_resource():
    base = cuda()
    calls = []

    def allocate(size, stream):
        calls.append(("a", size, stream.handle))
        return base.allocate(size, stream)

    def deallocate(ptr, size, stream):
        calls.append(("d", size, stream.handle))
        base.deallocate(ptr, size, stream)

    cb = mr.CallbackMemoryResource(allocate, deallocate)
    buf = rmm.DeviceBuffer(size=256, mr=cb)
    del buf
    gc.collect()
    assert calls == [("a", 256, 0), ("d", 256, 0)]


def test_callback_exception_reaches_caller():
    # As through RMM's Cython wrappers: MemoryError and RuntimeError reach the caller as they
    # are, any other exception as a RuntimeError with its message (chained to it here).
    class Boom(Exception):
        pass

    raised = []

    def allocate(size, stream):
        raise raised[-1]

    cb = mr.CallbackMemoryResource(allocate, lambda p, s, st: None)
    raised.append(Boom("no memory today"))
    with pytest.raises(RuntimeError, match="no memory today") as e:
        cb.allocate(10)
    assert isinstance(e.value, rmm.RMMError)
    assert e.value.__cause__ is raised[-1]
    raised.append(BaseException("base"))
    with pytest.raises(RuntimeError, match="base"):
        rmm.DeviceBuffer(size=256, mr=cb)
    for exc in (MemoryError("mem"), RuntimeError("rt"), KeyboardInterrupt()):
        raised.append(exc)
        with pytest.raises(type(exc)) as e:
            cb.allocate(10)
        assert e.value is exc


def test_callback_bad_return():
    cb = mr.CallbackMemoryResource(lambda s, st: "nope", lambda p, s, st: None)
    with pytest.raises(RuntimeError, match="must return the pointer as an int") as e:
        cb.allocate(10)
    assert isinstance(e.value.__cause__, TypeError)


def test_failure_callback_retries():
    lim = mr.LimitingResourceAdaptor(cuda(), MiB)
    held = [lim.allocate(MiB)]
    seen = []

    def on_oom(nbytes):
        seen.append(nbytes)
        if held:
            lim.deallocate(held.pop(), MiB)
            return True
        return False

    fc = mr.FailureCallbackResourceAdaptor(lim, on_oom)
    p = fc.allocate(MiB // 2)
    assert seen == [MiB // 2]
    fc.deallocate(p, MiB // 2)


def test_failure_callback_exception_reaches_the_caller():
    # RMM's test_failure_callback_resource_adaptor_error: no retry, the caller gets it.
    lim = mr.LimitingResourceAdaptor(cuda(), MiB)

    def on_oom(nbytes):
        raise RuntimeError("MyError")

    fc = mr.FailureCallbackResourceAdaptor(lim, on_oom)
    with pytest.raises(RuntimeError, match="MyError"):
        rmm.DeviceBuffer(size=2 * MiB, mr=fc)
    assert lim.get_allocated_bytes() == 0
    buf = rmm.DeviceBuffer(size=MiB // 2, mr=fc)  # the adaptor still works
    assert lim.get_allocated_bytes() == MiB // 2
    del buf


def test_tracking_report_is_rmms_format():
    tr = mr.TrackingResourceAdaptor(cuda())
    assert tr.get_outstanding_allocations_str() == ""
    buf = rmm.DeviceBuffer(size=1000, mr=tr)
    assert tr.get_outstanding_allocations_str() == f"{buf.ptr:#x}: 1000 B\n"
    del buf
    assert tr.get_outstanding_allocations_str() == ""


def test_pool_size_errors_are_runtime_errors_with_rmms_words():
    # RMM raises these as RuntimeError (C++ logic_error through Cython); its tests match
    # the words.
    try:
        with pytest.raises(RuntimeError, match="Initial pool size exceeds the maximum pool size"):
            rmm.reinitialize(
                pool_allocator=True, initial_pool_size=1 << 11, maximum_pool_size=1 << 10
            )
    finally:
        rmm.reinitialize()
    with pytest.raises(RuntimeError, match="Initial pool size required to be a multiple of 256"):
        mr.PoolMemoryResource(cuda(), initial_pool_size=1000)
    with pytest.raises(ValueError, match="Maximum pool size required to be a multiple of 256"):
        mr.PoolMemoryResource(cuda(), initial_pool_size=256, maximum_pool_size=1000)


def test_logging_levels_take_level_enum_members_only():
    from rmm.pylibrmm.logger import level_enum

    before = rmm.get_logging_level()
    try:
        for level in level_enum:  # n_levels included, as RMM's test_valid_logging_level
            rmm.set_logging_level(level)
            assert rmm.get_logging_level() == level
            rmm.set_flush_level(level)
            assert rmm.get_flush_level() == level
            assert isinstance(rmm.should_log(level), bool)
        rmm.set_logging_level(level_enum.n_levels)
        assert not rmm.should_log(level_enum.critical)
        rmm.set_logging_level(level_enum.trace)
        assert rmm.should_log(level_enum.debug)
        for bad in ("INFO", 3, True, None, 1.5, [1]):
            with pytest.raises(TypeError):
                rmm.set_logging_level(bad)
            with pytest.raises(TypeError):
                rmm.set_flush_level(bad)
            with pytest.raises(TypeError):
                rmm.should_log(bad)
    finally:
        rmm.set_logging_level(before)
        rmm.set_flush_level(level_enum.warn)


def test_adaptor_keeps_upstream_alive():
    up = cuda()
    ref = weakref.ref(up)
    st = mr.StatisticsResourceAdaptor(up)
    del up
    gc.collect()
    assert ref() is not None
    assert st.get_upstream() is ref()
    p = st.allocate(64)
    st.deallocate(p, 64)


def test_buffer_keeps_resource_alive():
    r = mr.StatisticsResourceAdaptor(cuda())
    ref = weakref.ref(r)
    b = rmm.DeviceBuffer(size=10, mr=r)
    del r
    gc.collect()
    assert ref() is not None
    del b
    gc.collect()
    assert ref() is None


def test_registry_python_roundtrip():
    pool = mr.PoolMemoryResource(cuda(), MiB)
    mr.set_current_device_resource(pool)
    assert mr.get_current_device_resource() is pool
    assert mr.get_per_device_resource(0) is pool
    assert type(mr.get_current_device_resource()) is mr.PoolMemoryResource
    assert type(mr.get_per_device_resource(0)) is mr.PoolMemoryResource
    assert mr.is_initialized()
    b = rmm.DeviceBuffer(size=10)
    assert b.mr is pool


def test_initial_resource_is_cuda():
    assert type(mr.get_current_device_resource()) is mr.CudaMemoryResource


def test_available_device_memory():
    free, total = mr.available_device_memory()
    assert 0 < free <= total


def test_logging_adaptor(tmp_path):
    log = mr.LoggingResourceAdaptor(cuda(), str(tmp_path / "log.csv"))
    assert log.get_file_name().endswith("log.dev0.csv")
    p = log.allocate(100)
    log.deallocate(p, 100)
    log.flush()
    text = open(log.get_file_name()).read()
    assert "allocate" in text and "free" in text


def test_logging_adaptor_needs_a_file(monkeypatch):
    monkeypatch.delenv("RMM_LOG_FILE", raising=False)
    with pytest.raises(ValueError, match="RMM_LOG_FILE"):
        mr.LoggingResourceAdaptor(cuda())
