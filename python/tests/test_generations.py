"""RMM 25.10 and 26.06 names and behaviours, beside 25.02's (one package serves all three)."""

import importlib
import sys

import numpy as np
import pytest

import rmm
import rmm.mr
from rmm import _ffi
from rmm.pylibrmm.stream import CudaStreamFlags, Stream


@pytest.fixture(autouse=True)
def _reset():
    yield
    rmm.reinitialize()


# ---- version story --------------------------------------------------------------------------


def test_supported_api_versions():
    import rmm._version

    assert rmm._version.SUPPORTED_API_VERSIONS == ("25.02", "25.10", "26.06")
    assert rmm.__version__ == "26.06.00"


# ---- package layout -------------------------------------------------------------------------


def test_mr_and_memory_resource_are_packages():
    import rmm.pylibrmm.memory_resource as pmr

    assert hasattr(rmm.mr, "__path__") and hasattr(pmr, "__path__")
    assert rmm.mr.experimental is importlib.import_module("rmm.mr.experimental")
    assert pmr.experimental is importlib.import_module("rmm.pylibrmm.memory_resource.experimental")
    assert rmm.pylibrmm.memory_resource is pmr
    for name in pmr.__all__:
        if name != "experimental":  # two modules (as in RMM), the same classes
            assert getattr(rmm.mr, name) is getattr(pmr, name)
    assert (
        rmm.mr.experimental.CudaAsyncManagedMemoryResource
        is pmr.experimental.CudaAsyncManagedMemoryResource
    )
    # The classes live in _memory_resource, as RMM 26.06's.
    assert rmm.mr.PoolMemoryResource.__module__.endswith("memory_resource._memory_resource")
    # Private helpers that 25.02-era code imported from the module are still reachable.
    from rmm.pylibrmm.memory_resource import _flush_logs, _initialize  # noqa: F401

    assert pmr._per_device_mrs is pmr._memory_resource._per_device_mrs
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        pmr.nothing_here  # noqa: B018


def test_pylibrmm_exports():
    import rmm.pylibrmm as p
    from rmm.pylibrmm.cuda_stream_pool import CudaStreamPool

    assert p.CudaStreamPool is CudaStreamPool
    assert p.CudaStreamFlags is CudaStreamFlags
    assert p.DeviceBuffer is rmm.DeviceBuffer
    assert {"CudaStreamPool", "CudaStreamFlags", "DeviceBuffer", "memory_resource"} <= set(
        p.__all__
    )


# ---- hipmm ----------------------------------------------------------------------------------


def test_hipmm_is_rmm_under_another_name():
    import hipmm

    assert hipmm.mr is rmm.mr
    assert hipmm.DeviceBuffer is rmm.DeviceBuffer
    assert hipmm.__version__ == rmm.__version__
    import hipmm.mr.experimental
    import hipmm.pylibrmm.memory_resource
    from hipmm.pylibrmm.stream import Stream as HStream

    assert hipmm.pylibrmm.memory_resource is rmm.pylibrmm.memory_resource
    assert hipmm.mr.experimental is rmm.mr.experimental
    assert HStream is Stream
    assert sys.modules["hipmm.mr"] is sys.modules["rmm.mr"]
    # No second copy: rmm's modules keep their own spec.
    assert rmm.mr.__spec__.name == "rmm.mr"
    assert rmm.pylibrmm.memory_resource.__spec__.name == "rmm.pylibrmm.memory_resource"
    # One registry through both names.
    pool = hipmm.mr.PoolMemoryResource(hipmm.mr.CudaMemoryResource(), 1 << 20)
    hipmm.mr.set_current_device_resource(pool)
    assert rmm.mr.get_current_device_resource() is pool
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("hipmm.no_such_module")
    with pytest.raises(AttributeError, match="hipmm"):
        hipmm.no_such_name  # noqa: B018


# ---- new resources --------------------------------------------------------------------------


def test_cuda_async_view_over_default_pool():
    pool = _ffi.device_default_mem_pool(rmm._cuda.gpu.getDevice())
    mr = rmm.mr.CudaAsyncViewMemoryResource(pool)
    assert mr.pool_handle() == pool
    rmm.mr.set_current_device_resource(mr)
    assert rmm.mr.get_current_device_resource() is mr
    assert rmm.mr.get_current_device_resource_type() is rmm.mr.CudaAsyncViewMemoryResource
    b = rmm.DeviceBuffer.to_device(b"abcdef")
    assert b.tobytes() == b"abcdef"

    class PoolT:  # cuda-bindings' handle types convert with int()
        def __int__(self):
            return pool

    assert rmm.mr.CudaAsyncViewMemoryResource(PoolT()).pool_handle() == pool


@pytest.mark.parametrize("bad", [None, 0, True, "pool", 1.5j])
def test_cuda_async_view_bad_handle(bad):
    with pytest.raises(ValueError, match="pool_handle"):
        rmm.mr.CudaAsyncViewMemoryResource(bad)


def test_cuda_async_fabric_and_ipc():
    mr = rmm.mr.CudaAsyncMemoryResource(enable_fabric=False)
    assert mr.pool_handle() != 0
    handle_types = rmm._cuda.gpu.getDeviceAttribute(119, rmm._cuda.gpu.getDevice())
    for kwargs, bit in (({"enable_ipc": True}, 1), ({"enable_fabric": True}, 8)):
        if handle_types & bit:
            rmm.mr.CudaAsyncMemoryResource(**kwargs)
            continue
        with pytest.raises(RuntimeError) as e:
            rmm.mr.CudaAsyncMemoryResource(**kwargs)
        # RMM's words at the end; librmm.so's reason (device, supported types) before them.
        assert str(e.value).endswith("Requested IPC memory handle type not supported")
        assert "device" in str(e.value)


def test_pinned_host_memory_resource():
    mr = rmm.mr.PinnedHostMemoryResource()
    assert isinstance(mr, rmm.mr.DeviceMemoryResource)
    assert not isinstance(mr, rmm.mr.UpstreamResourceAdaptor)
    ptr = mr.allocate(4096)
    assert ptr != 0
    mr.deallocate(ptr, 4096)
    st = rmm.mr.StatisticsResourceAdaptor(rmm.mr.PoolMemoryResource(mr, "1MiB", "2MiB"))
    rmm.mr.set_current_device_resource(st)
    data = np.arange(100, dtype=np.float32)
    b = rmm.DeviceBuffer.to_device(data.tobytes())
    np.testing.assert_array_equal(np.frombuffer(b.tobytes(), np.float32), data)
    assert st.allocation_counts.current_bytes == 400
    # Set from C, it comes back as its class.
    _ffi.set_current_device_resource(_ffi.pinned_host_create())
    assert rmm.mr.get_current_device_resource_type() is rmm.mr.PinnedHostMemoryResource


def test_cuda_async_managed_memory_resource():
    from rmm.mr.experimental import CudaAsyncManagedMemoryResource

    try:
        mr = CudaAsyncManagedMemoryResource()
    except NotImplementedError:
        pytest.skip("this runtime has no managed pools")
    assert isinstance(mr.pool_handle(), int) and mr.pool_handle() != 0
    rmm.mr.set_current_device_resource(mr)
    assert type(rmm.mr.get_current_device_resource()) is CudaAsyncManagedMemoryResource
    b = rmm.DeviceBuffer.to_device(np.full(7, 5, "u1"), stream=Stream())
    assert b.tobytes() == bytes([5] * 7)
    _ffi.set_current_device_resource(_ffi.async_managed_create())
    assert rmm.mr.get_current_device_resource_type() is CudaAsyncManagedMemoryResource


def test_failure_callback_retries_a_callback_memory_error():
    calls = []

    def allocate(size, stream):
        raise MemoryError("no more")

    def callback(nbytes):
        calls.append(nbytes)
        return len(calls) < 2

    failing = rmm.mr.CallbackMemoryResource(allocate, lambda p, s, st: None)
    rmm.mr.set_current_device_resource(rmm.mr.FailureCallbackResourceAdaptor(failing, callback))
    with pytest.raises(MemoryError, match="no more"):
        rmm.DeviceBuffer(size=256)
    assert calls == [256, 256]


# ---- streams --------------------------------------------------------------------------------


def test_cuda_stream_protocol():
    s = Stream()
    version, handle = s.__cuda_stream__()
    assert version == 0 and handle == s.handle != 0

    class Foreign:
        def __cuda_stream__(self):
            return (0, handle)

    assert Stream(Foreign()) == s
    assert hash(Stream(Foreign())) == hash(s)
    assert rmm.pylibrmm.stream.DEFAULT_STREAM.__cuda_stream__() == (0, 0)

    class V1:
        def __cuda_stream__(self):
            return (1, 2)

    with pytest.raises(NotImplementedError, match="version: '1'"):
        Stream(V1())


def test_stream_flags():
    for f in CudaStreamFlags:
        Stream(flags=f).synchronize()
    with pytest.raises(ValueError, match="flags may only be specified when obj is None"):
        Stream(Stream(), flags=CudaStreamFlags.NON_BLOCKING)
    with pytest.raises(ValueError, match="CudaStreamFlags"):
        Stream(flags=7)


def test_cuda_stream_pool():
    from rmm.pylibrmm.cuda_stream_pool import CudaStreamPool

    pool = CudaStreamPool(pool_size=4, flags=CudaStreamFlags.NON_BLOCKING)
    assert pool.get_pool_size() == 4
    streams = [pool.get_stream() for _ in range(4)]
    assert len(set(streams)) == 4
    assert rmm.pylibrmm.stream.DEFAULT_STREAM not in streams
    assert [pool.get_stream(i) for i in range(4)] == streams
    assert pool.get_stream() == streams[0]  # round robin
    assert pool.get_stream(5) == streams[1]
    s = streams[2]
    del pool, streams
    s.synchronize()  # a pool stream keeps its pool alive
    assert CudaStreamPool().get_pool_size() == 16
    with pytest.raises(ValueError, match="at least 1"):
        CudaStreamPool(pool_size=0)
    with pytest.raises(OverflowError):
        CudaStreamPool(pool_size=-1)
    with pytest.raises(TypeError):
        CudaStreamPool().get_stream("0")


def test_stream_none_is_refused():
    mr = rmm.mr.get_current_device_resource()
    b = rmm.DeviceBuffer.to_device(b"abc")
    from rmm.pylibrmm import device_buffer as dbm

    calls = [
        lambda: rmm.DeviceBuffer(size=10, stream=None),
        lambda: rmm.DeviceBuffer.to_device(b"abc", stream=None),
        lambda: b.copy_to_host(stream=None),
        lambda: b.copy_from_host(b"abc", stream=None),
        lambda: b.copy_from_device(b, stream=None),
        lambda: b.tobytes(stream=None),
        lambda: b.reserve(100, stream=None),
        lambda: b.resize(10, stream=None),
        lambda: dbm.copy_ptr_to_host(b.ptr, bytearray(3), stream=None),
        lambda: mr.allocate(16, stream=None),
        lambda: mr.deallocate(b.ptr, 3, stream=None),
    ]
    for call in calls:
        with pytest.raises(TypeError, match="stream argument cannot be None"):
            call()
    # Left out, the default stream is used; prefetch's None means the buffer's stream.
    assert rmm.DeviceBuffer.to_device(b"xyz").tobytes() == b"xyz"
    b.prefetch(stream=None)


def test_allocation_failing_in_the_runtime_is_memory_error():
    # RMM raises bad_alloc (MemoryError) when the runtime's allocation call fails for any
    # reason, e.g. a pool that was destroyed under an async view (RMM 25.10/26.06's
    # test_cuda_async_view_memory_resource_custom_pool); the runtime's error stays in the text.
    mr = rmm.mr.CudaAsyncViewMemoryResource(0xDEAD000)
    with pytest.raises(MemoryError, match="MallocFromPoolAsync failed"):
        rmm.DeviceBuffer(size=100, mr=mr)
