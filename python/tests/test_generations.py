"""The API generations: RMM 25.02, 25.10, 26.06, 26.08 and 26.10, one of which a process
follows (RMM_API_VERSION at import, rmm.set_api_version() before the first allocation), and
the names and behaviours 25.10 and 26.06 added beside 25.02's."""

import importlib
import json
import os
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

GENERATIONS = ["25.02", "25.10", "26.06", "26.08", "26.10"]


def test_supported_api_versions():
    import rmm._version

    assert rmm._version.SUPPORTED_API_VERSIONS == tuple(GENERATIONS)
    assert rmm.__version__ == "26.10.00"
    if not os.environ.get("RMM_API_VERSION"):
        assert rmm.api_version() == "26.10"  # the newest unless asked
    assert rmm.api_version() in GENERATIONS
    assert {"api_version", "set_api_version"} <= set(rmm.__all__)
    # Not names of RMM's own (RMM has no api_version in any release).
    for name in ("api_version", "set_api_version"):
        assert (getattr(rmm, name).__doc__ or "").strip()


@pytest.mark.parametrize(
    "value, generation",
    [
        ("25.02", "25.02"),
        ("2502", "25.02"),
        ("25.02.00", "25.02"),
        ("25.04", "25.10"),
        ("25.06", "25.10"),
        ("2508", "25.10"),
        ("25.10", "25.10"),
        ("25.12", "26.06"),
        ("26.02", "26.06"),
        ("2604", "26.06"),
        ("26.06.01", "26.06"),
        ("26.08", "26.08"),
        (" 26.10 ", "26.10"),
        (2610, "26.10"),
    ],
)
def test_releases_map_to_their_generation(value, generation):
    # As rmm/version_config.hpp maps RMM_API_VERSION for C++.
    assert rmm._generation.parse(value) == generation


@pytest.mark.parametrize(
    "value", ["24.12", "26.12", "27.02", "25.03", "2511", "25.1", "v25.02", "x", ""]
)
def test_unknown_version_is_refused(value):
    with pytest.raises(ValueError) as e:
        rmm.set_api_version(value)
    # The message names the accepted values.
    for v in GENERATIONS:
        assert v in str(e.value)
    assert repr(value) in str(e.value)
    for bad in (25.1, None, b"25.02", True):
        with pytest.raises(TypeError, match="version must be a string"):
            rmm.set_api_version(bad)


def test_setting_the_generation_in_force_is_always_allowed():
    rmm.DeviceBuffer(size=100)  # an allocation: no other generation may be chosen now
    rmm.set_api_version(rmm.api_version())
    rmm.set_api_version(rmm.api_version().replace(".", ""))


# Per generation (RMM_API_VERSION, in a child process): the names each has and lacks, and
# what reaches the resources. (module, name, first release with it, first release without).
NAMES = [
    ("rmm.mr", "CudaAsyncViewMemoryResource", "25.10", None),
    ("rmm.pylibrmm.memory_resource", "CudaAsyncViewMemoryResource", "25.10", None),
    ("rmm.mr", "PinnedHostMemoryResource", "26.06", None),
    ("rmm.pylibrmm.memory_resource", "PinnedHostMemoryResource", "26.06", None),
    ("rmm.mr", "experimental", "26.06", None),
    ("rmm.pylibrmm.memory_resource", "experimental", "26.06", None),
    ("rmm.pylibrmm", "CudaStreamPool", "26.06", None),
    ("rmm.pylibrmm", "CudaStreamFlags", "26.06", None),
    ("rmm.pylibrmm", "cuda_stream_pool", "26.06", None),
    ("rmm.pylibrmm", "cuda_stream", None, "26.06"),
    ("rmm.pylibrmm.stream", "CudaStreamFlags", "26.06", None),
    ("rmm.statistics", "ProfilerContext", "26.06", None),
    ("rmm._cuda", "stream", None, "26.06"),
    ("rmm.mr", "get_current_device_resource_type", None, "26.08"),
    ("rmm.mr", "get_per_device_resource_type", None, "26.08"),
    ("rmm.pylibrmm.memory_resource", "get_current_device_resource_type", None, "26.08"),
    ("rmm.pylibrmm.memory_resource", "get_per_device_resource_type", None, "26.08"),
    ("rmm.mr", "CudaMemoryResource", None, None),
    ("rmm.mr", "VmmPoolMemoryResource", None, None),
    ("rmm", "api_version", None, None),
]
MODULES = [
    ("rmm._cuda.stream", None, "26.06"),
    ("rmm.pylibrmm.cuda_stream", None, "26.06"),
    ("rmm.mr.experimental", "26.06", None),
    ("rmm.pylibrmm.memory_resource.experimental", "26.06", None),
    ("rmm.pylibrmm.cuda_stream_pool", "26.06", None),
]

_CHILD = """
import ctypes, importlib, json, sys, warnings
import pytest
warnings.simplefilter("error")  # as RMM's pytest configuration: a stray warning fails
import rmm, rmm.mr, rmm.statistics, rmm.pylibrmm.stream
from rmm import _ffi

gen, names, modules = json.loads(sys.argv[1])
num = int(gen.replace(".", ""))
has = lambda since, until: (since is None or num >= int(since.replace(".", ""))) and (
    until is None or num < int(until.replace(".", "")))
assert rmm.api_version() == gen, rmm.api_version()
assert rmm.__version__ == "26.10.00"

for modname, since, until in modules:
    if has(since, until):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # rmm._cuda.stream warns
            importlib.import_module(modname)
    else:
        with pytest.raises(ModuleNotFoundError, match=f"No module named '{modname}': RMM"):
            importlib.import_module(modname)

for modname, name, since, until in names:
    mod = importlib.import_module(modname)
    if has(since, until):
        assert getattr(mod, name) is not None, (modname, name)
        assert name in dir(mod), (modname, name)
        if hasattr(mod, "__all__") and not name.islower():
            assert name in mod.__all__, (modname, name)
    else:
        word = "removed" if until else "added"
        with pytest.raises(AttributeError, match=f"no attribute '{name}': RMM .* {word} it"):
            getattr(mod, name)
        assert not hasattr(mod, name) and name not in dir(mod), (modname, name)
        assert name not in getattr(mod, "__all__", ()), (modname, name)
        ns = {}
        exec(f"from {modname} import *", ns)
        assert name not in ns, (modname, name)
        with pytest.raises(ImportError):
            exec(f"from {modname} import {name}", {})
# get_*_resource_type: silent in 25.x, a FutureWarning in 26.06 (as RMM's), gone after.
if num <= 2510:
    assert rmm.mr.get_current_device_resource_type() is type(rmm.mr.get_current_device_resource())
    assert rmm.mr.get_per_device_resource_type(0) is type(rmm.mr.get_per_device_resource(0))
elif num == 2606:
    with pytest.warns(FutureWarning, match="get_current_device_resource_type is deprecated"):
        rmm.mr.get_current_device_resource_type()
    with pytest.warns(FutureWarning, match="get_per_device_resource_type is deprecated"):
        rmm.mr.get_per_device_resource_type(0)

# A size string too large for a float: ValueError from 26.10 (RMM's parse_bytes), before it
# the OverflowError of int(inf).
from rmm.pylibrmm.helper import parse_bytes
with pytest.raises(ValueError if num >= 2610 else OverflowError):
    rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), "9" * 400 + "GB")
with pytest.raises(ValueError if num >= 2610 else OverflowError):
    parse_bytes("9" * 400)
assert parse_bytes("1TiB") == 1 << 40

# DeviceBuffer sizes reach the resource rounded up to 16 in 25.02 and 25.10 (RMM's own
# test_statistics.py and test_tracking_resource_adaptor numbers), exactly from 26.06.
r = 16 if num <= 2510 else 1
up = lambda n: -(-n // r) * r
st = rmm.mr.StatisticsResourceAdaptor(rmm.mr.CudaMemoryResource())
rmm.mr.set_current_device_resource(st)
cur = lambda: st.allocation_counts.current_bytes
a = rmm.DeviceBuffer(size=20)
b = rmm.DeviceBuffer(size=10)
assert cur() == (48 if num <= 2510 else 30), cur()
assert (a.size, a.nbytes, len(a), a.capacity()) == (20, 20, 20, 20)
a.resize(100)
assert cur() == up(100) + up(10) and a.capacity() == 100
a.reserve(1000)
assert cur() == up(1000) + up(10) and a.capacity() == 1000 and a.size == 100
c = rmm.DeviceBuffer.to_device(b"x" * 33)
assert cur() == up(1000) + up(10) + up(33) and c.tobytes() == b"x" * 33
d = c.copy()
assert cur() == up(1000) + up(10) + 2 * up(33)
p = st.allocate(10)  # a resource's own allocate: the exact size in every generation
assert cur() == up(1000) + up(10) + 2 * up(33) + 10
st.deallocate(p, 10)
e = rmm.DeviceBuffer(size=0)
del a, b, c, d, e
assert cur() == 0 and st.allocation_counts.total_count == 7
buffers = [rmm.DeviceBuffer(size=1000) for _ in range(10)]
for i in range(9, 0, -2):
    del buffers[i]
assert cur() == (5040 if num <= 2510 else 5000)
t = rmm.mr.TrackingResourceAdaptor(rmm.mr.CudaMemoryResource())
x = rmm.DeviceBuffer(size=1000, mr=t)
assert t.get_allocated_bytes() == (1008 if num <= 2510 else 1000)
del x, buffers
assert cur() == 0

# rmm_torch_allocator: RMM 25.x asked for the size rounded up to 256.
assert _ffi.torch_alignment() == (256 if num <= 2510 else 1)
lib = ctypes.CDLL(_ffi.__file__)
alloc, free = lib.rmm_torch_allocate, lib.rmm_torch_deallocate
alloc.restype = ctypes.c_void_p
alloc.argtypes = [ctypes.c_ssize_t, ctypes.c_int, ctypes.c_void_p]
free.restype = None
free.argtypes = [ctypes.c_void_p, ctypes.c_ssize_t, ctypes.c_int, ctypes.c_void_p]
q = alloc(16, 0, None)
assert q and cur() == (256 if num <= 2510 else 16), cur()
free(q, 16, 0, None)
assert cur() == 0
print("ok", gen)
"""


@pytest.mark.parametrize("generation", GENERATIONS)
def test_each_generation(generation, run_in_generation):
    data = json.dumps([generation, NAMES, MODULES])
    code = f"import sys; sys.argv[1:] = [{data!r}]\n" + _CHILD
    assert run_in_generation(generation, code).split() == ["ok", generation]


def test_releases_between_generations_select_one(run_in_generation):
    for value, generation in (("2506", "25.10"), ("26.04.00", "26.06"), ("", "26.10")):
        out = run_in_generation(value, "import rmm; print(rmm.api_version())")
        assert out.strip() == generation, value
    assert run_in_generation(None, "import rmm; print(rmm.api_version())").strip() == "26.10"


@pytest.mark.parametrize("value", ["24.12", "26.12", "banana", "25.1"])
def test_unknown_rmm_api_version_fails_the_import(value, run_in_generation):
    err = run_in_generation(value, "import rmm", expect_rc=1)
    assert f"ValueError: RMM_API_VERSION={value!r} is not an RMM release this package serves" in err
    assert "25.02, 25.10, 26.06, 26.08 or 26.10" in err


def test_set_api_version_before_and_after_the_first_allocation(run_in_generation):
    out = run_in_generation(
        None,
        """
        import pytest, rmm, rmm.mr, hipmm
        from rmm.mr import StatisticsResourceAdaptor, CudaMemoryResource
        assert rmm.api_version() == "26.10"
        assert not hasattr(rmm.mr, "get_current_device_resource_type")
        rmm.set_api_version("26.06")
        assert rmm.mr.get_per_device_resource_type.__name__ == "get_per_device_resource_type"
        import rmm.mr.experimental
        rmm.set_api_version("2502")  # names and rounding follow
        assert rmm.api_version() == hipmm.api_version() == "25.02"
        assert not hasattr(rmm.mr, "experimental")  # imported under 26.06: hidden now
        assert not hasattr(rmm.mr, "CudaAsyncViewMemoryResource")
        assert "PinnedHostMemoryResource" not in dir(hipmm.mr)
        rmm.set_api_version("25.06")
        assert rmm.api_version() == "25.10"
        assert rmm.mr.CudaAsyncViewMemoryResource
        st = StatisticsResourceAdaptor(CudaMemoryResource())
        rmm.mr.set_current_device_resource(st)
        b = rmm.DeviceBuffer(size=20)
        assert st.allocation_counts.current_bytes == 32
        rmm.set_api_version("25.10")  # the generation in force: fine
        rmm.set_api_version("2508")
        with pytest.raises(RuntimeError) as e:
            rmm.set_api_version("26.10")
        msg = str(e.value)
        assert "before the first allocation" in msg and "under 25.10" in msg, msg
        assert "RMM_API_VERSION=26.10" in msg, msg
        assert rmm.api_version() == "25.10"
        del b
        assert st.allocation_counts.current_bytes == 0
        print("ok")
        """,
    )
    assert out.strip() == "ok"


def test_set_api_version_after_a_torch_allocation(run_in_generation):
    out = run_in_generation(
        "25.02",
        """
        import ctypes, pytest, rmm
        from rmm import _ffi
        lib = ctypes.CDLL(_ffi.__file__)
        lib.rmm_torch_allocate.restype = ctypes.c_void_p
        lib.rmm_torch_allocate.argtypes = [ctypes.c_ssize_t, ctypes.c_int, ctypes.c_void_p]
        lib.rmm_torch_deallocate.argtypes = [
            ctypes.c_void_p, ctypes.c_ssize_t, ctypes.c_int, ctypes.c_void_p]
        p = lib.rmm_torch_allocate(100, 0, None)
        assert p
        with pytest.raises(RuntimeError) as e:
            rmm.set_api_version("26.06")
        assert str(e.value).startswith("rmm.set_api_version('26.06'): the PyTorch allocator")
        assert rmm.api_version() == "25.02" and _ffi.torch_alignment() == 256
        lib.rmm_torch_deallocate(p, 100, 0, None)
        print("ok")
        """,
    )
    assert out.strip() == "ok"


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
    assert type(rmm.mr.get_current_device_resource()) is rmm.mr.CudaAsyncViewMemoryResource
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
    assert type(rmm.mr.get_current_device_resource()) is rmm.mr.PinnedHostMemoryResource


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
    assert type(rmm.mr.get_current_device_resource()) is CudaAsyncManagedMemoryResource


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
