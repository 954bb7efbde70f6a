"""rmm.mr.VmmPoolMemoryResource: the pool on virtual memory (librmm.so's
vmm_pool_memory_resource; not in RMM). The host runtime emulates virtual memory management
with a 2 MiB granularity; RMM_HOST_VMM=0 emulates a device without it."""

import ctypes
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import rmm
import rmm.mr as mr
import rmm.statistics
from rmm._exceptions import InvalidArgumentError, OutOfMemoryError, UnsupportedError
from rmm.pylibrmm.stream import Stream

MiB = 1 << 20
G = 2 * MiB  # the host runtime's granularity

on_host = pytest.mark.skipif(
    os.environ.get("RMM_RUNTIME") != "host", reason="sizes of the host runtime's emulation"
)


def small(**kwargs):
    """A pool with a small reservation, so growth maps little."""
    kwargs.setdefault("reserved_size", "64MiB")
    return mr.VmmPoolMemoryResource(**kwargs)


def run_child(code, **env):
    """Runs ``code`` in a fresh interpreter with ``env`` added; returns its stdout."""
    child_env = dict(os.environ, RMM_RUNTIME=os.environ.get("RMM_RUNTIME", "host"), **env)
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=child_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


# ---- the names ----------------------------------------------------------------------------


def test_exported_everywhere():
    import hipmm
    import hipmm.mr
    from rmm.pylibrmm import memory_resource as pmr

    cls = mr.VmmPoolMemoryResource
    assert "VmmPoolMemoryResource" in mr.__all__
    assert "VmmPoolMemoryResource" in pmr.__all__
    assert pmr.VmmPoolMemoryResource is cls
    assert hipmm.mr.VmmPoolMemoryResource is cls
    from hipmm.mr import VmmPoolMemoryResource

    assert VmmPoolMemoryResource is cls
    assert issubclass(cls, mr.DeviceMemoryResource)
    assert not issubclass(cls, mr.UpstreamResourceAdaptor)


def test_keyword_only_options():
    with pytest.raises(TypeError):
        mr.VmmPoolMemoryResource(0, None, 64 * MiB)


# ---- sizes --------------------------------------------------------------------------------


@on_host
def test_defaults():
    pool = mr.VmmPoolMemoryResource()
    _, total = mr.available_device_memory()
    assert pool.pool_size() == 0  # grows on demand
    assert pool.granularity() == G
    assert pool.reserved_size() == 2 * total
    assert pool.maximum_pool_size() == pool.reserved_size()
    assert pool.bytes_free() == 0
    assert pool.largest_free_block() == 0
    assert pool.fragmentation() == 0.0
    assert isinstance(pool.fragmentation(), float)
    assert pool.release() == 0


@on_host
def test_sizes_as_ints_and_strings():
    pool = mr.VmmPoolMemoryResource(
        "4MiB",
        maximum_pool_size="16MiB",
        reserved_size="32 MiB",
        granularity="2MiB",
        release_threshold="8MiB",
    )
    assert pool.pool_size() == 4 * MiB
    assert pool.maximum_pool_size() == 16 * MiB
    assert pool.reserved_size() == 32 * MiB
    assert pool.granularity() == G
    assert pool.bytes_free() == 4 * MiB
    stats = pool.pool_stats()
    assert stats == {
        "pool_size": 4 * MiB,
        "maximum_pool_size": 16 * MiB,
        "reserved_size": 32 * MiB,
        "granularity": G,
        "bytes_free": 4 * MiB,
        "free_block_count": 1,
        "largest_free_block": 4 * MiB,
        "fragmentation": 0.0,
    }
    ints = mr.VmmPoolMemoryResource(4 * MiB, 16 * MiB, reserved_size=32 * MiB, granularity=4 * MiB)
    assert (ints.pool_size(), ints.maximum_pool_size(), ints.granularity()) == (
        4 * MiB,
        16 * MiB,
        4 * MiB,
    )


@on_host
def test_sizes_round_to_the_granularity():
    pool = small(initial_pool_size=G + 1)
    assert pool.pool_size() == 2 * G
    assert small(reserved_size=G + 1).reserved_size() == 2 * G


# ---- memory -------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [0, 1, 1000, 3 * MiB])
def test_allocate_deallocate(size):
    pool = small()
    p = pool.allocate(size)
    assert isinstance(p, int)
    if size:
        assert p != 0 and p % 256 == 0
        assert pool.pool_size() >= size
    pool.deallocate(p, size)


def test_device_buffer_round_trip():
    pool = small()
    data = np.arange(3 * MiB, dtype=np.uint8) * 7
    buf = rmm.DeviceBuffer(size=data.nbytes, mr=pool)
    assert buf.mr is pool and buf.nbytes == data.nbytes
    buf.copy_from_host(data)
    assert np.array_equal(buf.copy_to_host(), data)
    copy = buf.copy()
    assert np.array_equal(copy.copy_to_host(), data)
    small_buf = rmm.DeviceBuffer.to_device(b"virtual memory", mr=pool)
    assert small_buf.tobytes() == b"virtual memory"
    assert bytes(small_buf.copy_to_host()) == b"virtual memory"


def test_allocate_on_a_stream():
    pool = small()
    s = Stream()
    buf = rmm.DeviceBuffer.to_device(b"x" * 5000, stream=s, mr=pool)
    assert buf.tobytes() == b"x" * 5000
    del buf
    s.synchronize()
    assert pool.bytes_free() == pool.pool_size()


@on_host
def test_grows_in_place():
    # The initial granule is full, so the second buffer makes the pool grow: the new
    # memory is mapped right after the old, where the second buffer lands.
    pool = small(initial_pool_size=G)
    a = rmm.DeviceBuffer(size=G, mr=pool)
    assert pool.pool_size() == G and pool.bytes_free() == 0
    b = rmm.DeviceBuffer(size=G, mr=pool)
    assert pool.pool_size() > G
    assert b.ptr == a.ptr + G
    # One block spans the two growths: writes and reads cross the boundary.
    data = bytes(range(256)) * (2 * G // 256)
    big_copy = rmm.DeviceBuffer(size=2 * G, mr=mr.CudaMemoryResource())
    big_copy.copy_from_host(data)
    rmm._ffi.memcpy(a.ptr, big_copy.ptr, 2 * G)
    assert a.tobytes() + b.tobytes() == data
    # Freed, the two growths merge into one free block.
    del a, b
    assert pool.bytes_free() == pool.pool_size()
    assert pool.largest_free_block() == pool.bytes_free()
    assert pool.pool_stats()["free_block_count"] == 1
    assert pool.fragmentation() == 0.0
    # ...that serves a request spanning both.
    c = rmm.DeviceBuffer(size=pool.pool_size(), mr=pool)
    assert c.size == pool.pool_size()


@on_host
def test_release_while_a_buffer_lives():
    pool = small()
    a = rmm.DeviceBuffer(size=G, mr=pool)
    b = rmm.DeviceBuffer(size=G, mr=pool)
    c = rmm.DeviceBuffer(size=G, mr=pool)
    b.copy_from_host(b"b" * G)
    before = pool.pool_size()
    assert before >= 3 * G
    del a, c
    released = pool.release()
    assert released == before - G
    # Only b's granule stays mapped, with the free granules on both sides unmapped.
    assert pool.pool_size() == G
    assert pool.bytes_free() == 0
    assert b.tobytes() == b"b" * G
    assert pool.release() == 0
    # The pool maps again when asked.
    d = rmm.DeviceBuffer.to_device(b"again", mr=pool)
    assert d.tobytes() == b"again"
    assert pool.pool_size() > G


@on_host
def test_release_threshold():
    pool = small(release_threshold="4MiB")
    a = rmm.DeviceBuffer(size=8 * MiB, mr=pool)
    assert pool.pool_size() >= 8 * MiB
    del a  # more than the threshold free: what idle streams freed is unmapped
    assert pool.bytes_free() == pool.pool_size() <= 4 * MiB + G
    kept = small()
    a = rmm.DeviceBuffer(size=G, mr=kept)
    size = kept.pool_size()
    del a
    assert kept.pool_size() == size  # no threshold: kept until release()
    assert kept.release() == size


@on_host
def test_maximum_is_honoured():
    pool = small(maximum_pool_size="4MiB")
    a = rmm.DeviceBuffer(size=3 * MiB, mr=pool)
    with pytest.raises(MemoryError) as info:
        rmm.DeviceBuffer(size=6 * MiB, mr=pool)
    assert isinstance(info.value, OutOfMemoryError)
    assert isinstance(info.value, rmm.RMMError)
    msg = str(info.value)
    assert str(6 * MiB) in msg
    assert "vmm_pool_memory_resource" in msg and "maximum" in msg and str(4 * MiB) in msg
    assert pool.pool_size() <= 4 * MiB
    with pytest.raises(MemoryError, match=str(8 * MiB)):
        pool.allocate(8 * MiB)
    assert a.size == 3 * MiB


# ---- bad arguments ------------------------------------------------------------------------


@on_host
@pytest.mark.parametrize("granularity", [3 * MiB, MiB, "1MiB", 4096])
def test_granularity_not_a_multiple_of_the_device(granularity):
    with pytest.raises(ValueError, match="granularity") as info:
        small(granularity=granularity)
    assert isinstance(info.value, InvalidArgumentError)
    assert "minimum mapping granularity" in str(info.value)


@pytest.mark.parametrize(
    "kwargs,exc,match",
    [
        (dict(granularity=0), ValueError, "granularity must be positive"),
        (dict(granularity="fine"), ValueError, "byte specification"),
        (dict(granularity=1.5), TypeError, None),
        (dict(granularity=-G), OverflowError, None),
        (dict(granularity=True), TypeError, None),
        (dict(maximum_pool_size=0), ValueError, "maximum_pool_size must be positive"),
        (dict(reserved_size=0), ValueError, "reserved_size must be positive"),
        (dict(initial_pool_size=-1), OverflowError, None),
        (dict(initial_pool_size="lots"), ValueError, "byte specification"),
        (dict(release_threshold=[1]), TypeError, None),
        (dict(initial_pool_size="8MiB", maximum_pool_size="4MiB"), ValueError, "initial_pool_size"),
        (dict(maximum_pool_size="128MiB"), ValueError, "reserved"),
        (dict(initial_pool_size="128MiB"), ValueError, "reserved"),
        (dict(maximum_pool_size=1), ValueError, "granule"),
    ],
)
def test_bad_arguments(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        small(**kwargs)


def test_peer_device_out_of_range():
    count = rmm._cuda.gpu.getDeviceCount()
    with pytest.raises(ValueError, match=f"peer device {count} does not exist") as info:
        small(peer_devices=[count])
    assert isinstance(info.value, InvalidArgumentError)
    with pytest.raises(ValueError, match="peer device -1 does not exist"):
        small(peer_devices=(-1,))
    with pytest.raises(ValueError, match="does not exist"):
        small(peer_devices=[1 << 40])


@pytest.mark.parametrize("peers", ["0", [0.0], [None], 1.0, [True]])
def test_peer_devices_of_the_wrong_type(peers):
    with pytest.raises(TypeError, match="peer_devices"):
        small(peer_devices=peers)


def test_own_device_as_peer():
    for peers in ([0], (0,), 0, range(1), None):
        pool = small(peer_devices=peers)
        assert rmm.DeviceBuffer.to_device(b"own", mr=pool).tobytes() == b"own"


@on_host
def test_peer_device_on_two_devices():
    out = run_child(
        """
        import rmm, rmm.mr as mr
        pool = mr.VmmPoolMemoryResource(reserved_size="64MiB", peer_devices=[1])
        buf = rmm.DeviceBuffer.to_device(b"peer", mr=pool)
        print(buf.tobytes().decode(), pool.pool_size() > 0)
        try:
            mr.VmmPoolMemoryResource(reserved_size="64MiB", peer_devices=[0, 2])
        except ValueError as e:
            print(type(e).__name__, e)
        """,
        RMM_HOST_DEVICES="2",
    )
    first, second = out.splitlines()
    assert first == "peer True"
    assert second.startswith("InvalidArgumentError") and "peer device 2 does not exist" in second


@on_host
def test_without_virtual_memory_management():
    out = run_child(
        """
        import rmm, rmm.mr as mr
        from rmm._exceptions import UnsupportedError
        try:
            mr.VmmPoolMemoryResource()
        except NotImplementedError as e:
            print(type(e).__name__, isinstance(e, RuntimeError), isinstance(e, rmm.RMMError))
            print(e)
        # other resources are unaffected
        pool = mr.PoolMemoryResource(mr.CudaMemoryResource(), "2MiB")
        print(rmm.DeviceBuffer.to_device(b"ok", mr=pool).tobytes().decode())
        """,
        RMM_HOST_VMM="0",
    )
    kind, msg, ok = out.splitlines()
    assert kind == f"{UnsupportedError.__name__} True True"
    assert "vmm_pool_memory_resource" in msg and "no virtual memory management" in msg
    assert ok == "ok"


# ---- with the rest of rmm -----------------------------------------------------------------


def test_current_device_resource():
    pool = small()
    mr.set_current_device_resource(pool)
    assert mr.get_current_device_resource() is pool
    assert type(mr.get_current_device_resource()) is mr.VmmPoolMemoryResource
    assert mr.get_per_device_resource(0) is pool
    buf = rmm.DeviceBuffer.to_device(b"current")  # from the current resource
    assert buf.mr is pool
    assert pool.pool_size() > 0 and pool.bytes_free() < pool.pool_size()
    del buf
    assert pool.bytes_free() == pool.pool_size()


def test_statistics_and_tracking_adaptors():
    pool = small()
    stats = mr.StatisticsResourceAdaptor(pool)
    tracking = mr.TrackingResourceAdaptor(stats)
    assert stats.get_upstream() is pool
    a = rmm.DeviceBuffer(size=1000, mr=tracking)
    b = rmm.DeviceBuffer(size=3 * MiB, mr=tracking)
    assert stats.allocation_counts.current_bytes == 1000 + 3 * MiB
    assert stats.allocation_counts["current_count"] == 2
    assert tracking.get_allocated_bytes() == 1000 + 3 * MiB
    del a, b
    assert stats.allocation_counts.current_bytes == 0
    assert stats.allocation_counts.peak_bytes == 1000 + 3 * MiB
    assert pool.bytes_free() == pool.pool_size()


def test_rmm_statistics_over_the_pool():
    pool = small()
    mr.set_current_device_resource(pool)
    rmm.statistics.enable_statistics()
    adaptor = mr.get_current_device_resource()
    assert isinstance(adaptor, mr.StatisticsResourceAdaptor)
    assert adaptor.get_upstream() is pool
    with rmm.statistics.statistics():
        buf = rmm.DeviceBuffer(size=4096)
        assert rmm.statistics.get_statistics().current_bytes == 4096
    del buf


def test_set_from_c_comes_back_as_the_class():
    class Options(ctypes.Structure):
        _fields_ = [
            ("initial_pool_size", ctypes.c_size_t),
            ("maximum_pool_size", ctypes.c_size_t),
            ("reserved_size", ctypes.c_size_t),
            ("granularity", ctypes.c_size_t),
            ("release_threshold", ctypes.c_size_t),
            ("peer_devices", ctypes.POINTER(ctypes.c_int32)),
            ("peer_device_count", ctypes.c_size_t),
        ]

    lib = ctypes.CDLL(rmm.get_library_path())
    res = ctypes.c_void_p
    lib.rmm_vmm_pool_options_init.argtypes = [ctypes.POINTER(Options)]
    lib.rmm_vmm_pool_create.argtypes = [ctypes.POINTER(Options), ctypes.POINTER(res)]
    lib.rmm_set_current_device_resource.argtypes = [res, ctypes.POINTER(res)]
    lib.rmm_resource_release.argtypes = [res]
    for f in (lib.rmm_vmm_pool_options_init, lib.rmm_vmm_pool_create,
              lib.rmm_set_current_device_resource, lib.rmm_resource_release):
        f.restype = ctypes.c_uint32

    options = Options()
    assert lib.rmm_vmm_pool_options_init(ctypes.byref(options)) == 0
    options.reserved_size = 64 * MiB
    options.initial_pool_size = 2 * MiB
    h, prev = res(), res()
    assert lib.rmm_vmm_pool_create(ctypes.byref(options), ctypes.byref(h)) == 0
    assert lib.rmm_set_current_device_resource(h, ctypes.byref(prev)) == 0
    lib.rmm_resource_release(prev)
    lib.rmm_resource_release(h)  # the registry keeps its own reference

    pool = mr.get_current_device_resource()
    assert type(pool) is mr.VmmPoolMemoryResource
    assert mr.get_current_device_resource() is pool
    assert pool.reserved_size() == 64 * MiB
    assert rmm.DeviceBuffer.to_device(b"from C", mr=pool).tobytes() == b"from C"


def test_reinitialize_with_the_vmm_pool():
    rmm.reinitialize(vmm_pool_allocator=True, initial_pool_size="2MiB", maximum_pool_size="8MiB")
    pool = mr.get_current_device_resource()
    assert type(pool) is mr.VmmPoolMemoryResource
    assert pool.maximum_pool_size() == 8 * MiB
    if os.environ.get("RMM_RUNTIME") == "host":
        assert pool.pool_size() == 2 * MiB
    buf = rmm.DeviceBuffer.to_device(b"reinitialized")
    assert buf.mr is pool
    del buf
    rmm.reinitialize(vmm_pool_allocator=True)
    assert mr.get_current_device_resource().pool_size() == 0
    rmm.reinitialize()
    assert type(mr.get_current_device_resource()) is mr.CudaMemoryResource


@pytest.mark.parametrize(
    "kwargs", [dict(pool_allocator=True), dict(managed_memory=True)], ids=["pool", "managed"]
)
def test_reinitialize_vmm_pool_excludes(kwargs):
    before = mr.get_current_device_resource()
    with pytest.raises(ValueError, match="vmm_pool_allocator"):
        rmm.reinitialize(vmm_pool_allocator=True, **kwargs)
    assert mr.get_current_device_resource() is before


def test_reinitialize_with_logging(tmp_path):
    log = tmp_path / "vmm.csv"
    rmm.reinitialize(vmm_pool_allocator=True, logging=True, log_file_name=str(log))
    adaptor = mr.get_current_device_resource()
    assert isinstance(adaptor, mr.LoggingResourceAdaptor)
    assert type(adaptor.get_upstream()) is mr.VmmPoolMemoryResource
    buf = rmm.DeviceBuffer(size=100)
    del buf
    adaptor.flush()
    rows = open(adaptor.get_file_name()).read().splitlines()
    assert len(rows) == 3 and "allocate" in rows[1] and "free" in rows[2]
    rmm.reinitialize()


def test_repr_and_pickling():
    pool = small()
    assert "VmmPoolMemoryResource" in repr(pool)
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(pool)
    # A buffer from the pool pickles as its bytes (unpickled from the current resource).
    buf = rmm.DeviceBuffer.to_device(b"pickled", mr=pool)
    assert pickle.loads(pickle.dumps(buf)).tobytes() == b"pickled"


def test_is_equal():
    a, b = small(), small()
    assert a.is_equal(a)
    assert not a.is_equal(b)
