import copy
import pickle

import numpy as np
import pytest

import rmm
import rmm.mr as mr
from rmm.pylibrmm.stream import Stream


def test_defaults():
    b = rmm.DeviceBuffer()
    assert b.size == 0 and b.nbytes == 0 and len(b) == 0
    assert b.tobytes() == b""
    b = rmm.DeviceBuffer(size=10)
    assert b.size == 10 and b.nbytes == 10 and len(b) == 10 and b.ptr != 0
    assert b.__sizeof__() == 10
    assert isinstance(b.mr, mr.CudaMemoryResource)


def test_to_device_and_back():
    data = bytes(range(256)) * 3
    b = rmm.DeviceBuffer.to_device(data)
    assert b.size == len(data)
    assert b.tobytes() == data
    assert bytes(b) == data
    host = b.copy_to_host()
    assert isinstance(host, np.ndarray) and host.dtype == np.uint8
    assert host.tobytes() == data
    out = bytearray(len(data))
    assert b.copy_to_host(out) is out
    assert bytes(out) == data


def test_from_ptr():
    src = np.arange(32, dtype=np.uint8)
    b = rmm.DeviceBuffer(ptr=src.ctypes.data, size=32)
    assert b.tobytes() == src.tobytes()


def test_copy_from_host_and_device():
    b = rmm.DeviceBuffer(size=10)
    b.copy_from_host(b"abcdef")
    assert b.tobytes()[:6] == b"abcdef"
    c = rmm.DeviceBuffer(size=10)
    c.copy_from_device(b)
    assert c.tobytes() == b.tobytes()
    with pytest.raises(ValueError, match="too large"):
        b.copy_from_host(b"x" * 11)
    with pytest.raises(ValueError, match="too small"):
        b.copy_to_host(bytearray(5))
    with pytest.raises(ValueError):
        c.copy_from_device(b"not a device array")


def test_copy_is_independent():
    b = rmm.DeviceBuffer.to_device(b"hello")
    c = b.copy()
    assert c.ptr != b.ptr and c.tobytes() == b"hello"
    b.copy_from_host(b"HELLO")
    assert c.tobytes() == b"hello"
    assert copy.copy(b).tobytes() == b"HELLO"
    assert copy.deepcopy(b).tobytes() == b"HELLO"


def test_resize_and_reserve():
    b = rmm.DeviceBuffer.to_device(b"0123456789")
    b.reserve(100)
    assert b.capacity() >= 100 and b.size == 10
    assert b.tobytes() == b"0123456789"
    b.resize(4)
    assert b.size == 4 and b.tobytes() == b"0123"
    b.resize(200)
    assert b.size == 200 and b.tobytes()[:4] == b"0123"
    assert b.capacity() >= 200


def test_cuda_array_interface():
    b = rmm.DeviceBuffer(size=12)
    cai = b.__cuda_array_interface__
    assert cai["data"] == (b.ptr, False)
    assert cai["shape"] == (12,)
    assert cai["typestr"] == "|u1"
    assert cai["strides"] is None


def test_pickle():
    b = rmm.DeviceBuffer.to_device(b"pickled bytes")
    c = pickle.loads(pickle.dumps(b))
    assert isinstance(c, rmm.DeviceBuffer)
    assert c.tobytes() == b"pickled bytes"
    assert c.ptr != b.ptr
    # Protocol 5 passes the contents out of band, as RMM's (a numpy array in __reduce__).
    buffers = []
    data = pickle.dumps(b, protocol=5, buffer_callback=buffers.append)
    assert len(buffers) == 1 and isinstance(buffers[0], pickle.PickleBuffer)
    assert bytes(buffers[0]) == b"pickled bytes"
    assert pickle.loads(data, buffers=buffers).tobytes() == b"pickled bytes"


def test_host_buffers_must_be_one_dimensional_unsigned_bytes():
    # RMM's functions take `unsigned char[::1]`: other formats, more dimensions or strides
    # are a ValueError, objects without the buffer protocol a TypeError.
    for bad in (np.ones(2, "u2"), np.ones((2, 2), "u1"), np.ones(4, "u1")[::2], np.ones(2, "i1")):
        with pytest.raises(ValueError):
            rmm.DeviceBuffer.to_device(bad)
        with pytest.raises(ValueError):
            rmm.DeviceBuffer(size=4).copy_from_host(bad)
        with pytest.raises(ValueError):
            rmm.DeviceBuffer(size=4).copy_to_host(bad)
    with pytest.raises(TypeError):
        rmm.DeviceBuffer.to_device([1, 2, 3])
    for good in (b"abc", bytearray(b"abc"), memoryview(b"abc"), np.arange(3, dtype="u1")):
        assert rmm.DeviceBuffer.to_device(good).tobytes() == bytes(good)


def test_stream_argument():
    s = Stream()
    b = rmm.DeviceBuffer(size=64, stream=s)
    b.copy_from_host(b"\x01" * 64, stream=s)
    assert b.tobytes(stream=s) == b"\x01" * 64
    assert b.stream is s


def test_prefetch_is_a_hint():
    b = rmm.DeviceBuffer(size=64, mr=mr.ManagedMemoryResource())
    b.prefetch()
    b.prefetch(device=0, stream=Stream())
    b.prefetch(device=-1)  # to the host (cudaCpuDeviceId)
    b.prefetch(device=np.int32(0))
    # Memory that is not managed, and an empty buffer: no-ops, as in RMM.
    rmm.DeviceBuffer(size=64, mr=mr.CudaMemoryResource()).prefetch()
    rmm.DeviceBuffer(size=0).prefetch()
    assert b.tobytes() == rmm.DeviceBuffer.to_device(b.tobytes()).tobytes()


def test_prefetch_defaults_to_current_device_and_buffer_stream(monkeypatch):
    from rmm.pylibrmm import device_buffer

    calls = []
    monkeypatch.setattr(device_buffer._ffi, "prefetch", lambda *args: calls.append(args))
    s = Stream()
    b = rmm.DeviceBuffer(size=256, stream=s, mr=mr.ManagedMemoryResource())
    b.prefetch()
    other = Stream()
    b.prefetch(device=-1, stream=other)
    assert calls == [
        (b.ptr, 256, rmm._ffi.get_current_device(), s._handle),
        (b.ptr, 256, -1, other._handle),
    ]


def test_prefetch_bad_arguments():
    b = rmm.DeviceBuffer(size=64, mr=mr.ManagedMemoryResource())
    with pytest.raises(TypeError):
        b.prefetch(device="0")
    with pytest.raises(TypeError):
        b.prefetch(device=True)
    with pytest.raises(TypeError):
        b.prefetch(stream=0)
    with pytest.raises(rmm.RMMError) as e:
        b.prefetch(device=-2)  # no device, and not the host either
    assert isinstance(e.value, ValueError) and "rmm_prefetch" in str(e.value)
    if rmm._ffi.runtime_name() == "host":
        with pytest.raises(rmm.RMMError) as e:
            b.prefetch(device=rmm._ffi.get_device_count())
        assert e.value.runtime_code == 101  # cudaErrorInvalidDevice


def test_memory_returned():
    st = mr.StatisticsResourceAdaptor(mr.CudaMemoryResource())
    b = rmm.DeviceBuffer(size=1000, mr=st)
    # The resource is asked for the exact size, as RMM 26.06 counts it (25.02 and 25.10
    # rounded up to 16: docs/python.md, "Generation conflicts").
    assert st.allocation_counts.current_bytes == 1000
    assert (b.size, b.nbytes, b.capacity()) == (1000, 1000, 1000)
    b.resize(5000)
    assert st.allocation_counts.current_bytes == 5000
    assert (b.size, b.capacity()) == (5000, 5000)
    b.resize(10)  # within the capacity: no reallocation
    assert (b.size, b.capacity()) == (10, 5000)
    assert st.allocation_counts.current_bytes == 5000
    b.reserve(5001)
    assert (b.size, b.capacity()) == (10, 5001)
    assert st.allocation_counts.current_bytes == 5001
    del b
    assert st.allocation_counts.current_bytes == 0
    for size in (1, 16, 17, 20):
        b = rmm.DeviceBuffer(size=size, mr=st)
        assert st.allocation_counts.current_bytes == size
        del b
