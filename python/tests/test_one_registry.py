"""One process, one registry: Python and C (ctypes into the same librmm.so) share the
per-device resource."""

import ctypes

import pytest

import rmm
import rmm.mr as mr


class Counter(ctypes.Structure):
    _fields_ = [("value", ctypes.c_int64), ("peak", ctypes.c_int64), ("total", ctypes.c_int64)]


class Counters(ctypes.Structure):
    _fields_ = [("bytes", Counter), ("allocations", Counter)]


@pytest.fixture(scope="module")
def lib():
    lib = ctypes.CDLL(rmm.get_library_path())
    res = ctypes.c_void_p
    for name, args in {
        "rmm_get_current_device_resource": [ctypes.POINTER(res)],
        "rmm_set_current_device_resource": [res, ctypes.POINTER(res)],
        "rmm_cuda_create": [ctypes.POINTER(res)],
        "rmm_statistics_adaptor_create": [res, ctypes.POINTER(res)],
        "rmm_statistics_adaptor_get_counters": [res, ctypes.POINTER(Counters)],
        "rmm_resource_release": [res],
        "rmm_resource_name": [res, ctypes.POINTER(ctypes.c_char_p)],
        "rmm_allocate": [res, ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p)],
        "rmm_deallocate": [res, ctypes.c_void_p, ctypes.c_size_t],
        "rmm_resource_id": [res, ctypes.POINTER(ctypes.c_uint64)],
    }.items():
        f = getattr(lib, name)
        f.argtypes = args
        f.restype = ctypes.c_uint32
    return lib


def ok(status):
    assert status == 0, status


def test_same_library_object(lib):
    # ctypes got the very library the extension uses: one copy in the process.
    import os

    assert os.path.samefile(rmm.get_library_path(), os.path.join(rmm.get_lib_dir(), "librmm.so"))
    maps = open("/proc/self/maps").read()
    assert len({line.split()[-1] for line in maps.splitlines() if line.endswith("/librmm.so")}) == 1


def test_set_from_python_seen_from_c(lib):
    st = mr.StatisticsResourceAdaptor(mr.CudaMemoryResource())
    mr.set_current_device_resource(st)

    h = ctypes.c_void_p()
    ok(lib.rmm_get_current_device_resource(ctypes.byref(h)))
    name = ctypes.c_char_p()
    ok(lib.rmm_resource_name(h, ctypes.byref(name)))
    assert name.value == b"statistics_resource_adaptor"
    p = ctypes.c_void_p()
    ok(lib.rmm_allocate(h, 4096, ctypes.byref(p)))
    # the allocation C made through the current resource is counted by Python's adaptor
    assert st.allocation_counts.current_bytes == 4096
    ok(lib.rmm_deallocate(h, p, 4096))
    assert st.allocation_counts.current_bytes == 0
    ok(lib.rmm_resource_release(h))


def test_set_from_c_seen_from_python(lib):
    cuda = ctypes.c_void_p()
    ok(lib.rmm_cuda_create(ctypes.byref(cuda)))
    st = ctypes.c_void_p()
    ok(lib.rmm_statistics_adaptor_create(cuda, ctypes.byref(st)))
    ok(lib.rmm_resource_release(cuda))
    ok(lib.rmm_set_current_device_resource(st, None))

    current = mr.get_current_device_resource()
    assert isinstance(current, mr.StatisticsResourceAdaptor)
    assert type(mr.get_current_device_resource()) is mr.StatisticsResourceAdaptor
    assert isinstance(current.get_upstream(), mr.CudaMemoryResource)
    buf = rmm.DeviceBuffer(size=1000)
    assert buf.mr.allocation_counts.current_bytes == 1000  # the exact size, as RMM 26.06's
    c = Counters()
    ok(lib.rmm_statistics_adaptor_get_counters(st, ctypes.byref(c)))
    assert (c.bytes.value, c.allocations.value) == (1000, 1)
    del buf
    ok(lib.rmm_statistics_adaptor_get_counters(st, ctypes.byref(c)))
    assert c.bytes.value == 0
    ok(lib.rmm_set_current_device_resource(None, None))
    ok(lib.rmm_resource_release(st))
    assert type(mr.get_current_device_resource()) is mr.CudaMemoryResource


def test_python_object_replaced_from_c(lib):
    pool = mr.PoolMemoryResource(mr.CudaMemoryResource(), 1 << 20)
    mr.set_current_device_resource(pool)
    assert mr.get_current_device_resource() is pool
    ok(lib.rmm_set_current_device_resource(None, None))
    assert mr.get_current_device_resource() is not pool
    assert type(mr.get_current_device_resource()) is mr.CudaMemoryResource


def _c_id(lib, handle):
    out = ctypes.c_uint64()
    ok(lib.rmm_resource_id(handle, ctypes.byref(out)))
    return out.value


def test_resource_id_is_the_same_from_c_and_python(lib):
    st = mr.StatisticsResourceAdaptor(mr.CudaMemoryResource())
    mr.set_current_device_resource(st)
    h = ctypes.c_void_p()
    ok(lib.rmm_get_current_device_resource(ctypes.byref(h)))
    # A new handle (C's), the same resource.
    assert h.value != st._handle.address
    assert _c_id(lib, h) == rmm._ffi.resource_id(st._handle)
    assert rmm._ffi.resource_id(st._handle.retain()) == rmm._ffi.resource_id(st._handle)
    assert rmm._ffi.resource_id(st._handle.upstream()) == rmm._ffi.resource_id(
        st.get_upstream()._handle
    )
    ok(lib.rmm_resource_release(h))


def test_c_set_twin_is_not_taken_for_the_python_object(lib):
    # Python's adaptor and a twin made in C: the same kind over the same upstream, so
    # rmm_resource_is_equal calls them equal, but they are two objects with two counters.
    st = mr.StatisticsResourceAdaptor(mr.CudaMemoryResource())
    mr.set_current_device_resource(st)
    assert mr.get_current_device_resource() is st

    twin = ctypes.c_void_p()
    upstream = ctypes.c_void_p(st.get_upstream()._handle.address)
    ok(lib.rmm_statistics_adaptor_create(upstream, ctypes.byref(twin)))
    assert st._handle.is_equal(rmm._ffi.get_current_device_resource()) is True
    ok(lib.rmm_set_current_device_resource(twin, None))

    current = mr.get_current_device_resource()
    assert current is not st
    assert isinstance(current, mr.StatisticsResourceAdaptor)
    assert rmm._ffi.resource_id(current._handle) == _c_id(lib, twin)
    assert mr.get_current_device_resource() is current  # remembered from now on
    buf = rmm.DeviceBuffer(size=512)
    assert buf.mr is current
    assert current.allocation_counts.current_bytes == 512
    assert st.allocation_counts.current_bytes == 0  # Python's adaptor saw nothing
    c = Counters()
    ok(lib.rmm_statistics_adaptor_get_counters(twin, ctypes.byref(c)))
    assert c.bytes.value == 512
    del buf

    # Python's adaptor set back from C: not taken for the twin's object either.
    py_handle = ctypes.c_void_p(st._handle.address)
    ok(lib.rmm_set_current_device_resource(py_handle, None))
    again = mr.get_current_device_resource()
    assert again is not current
    assert rmm._ffi.resource_id(again._handle) == rmm._ffi.resource_id(st._handle)
    ok(lib.rmm_set_current_device_resource(None, None))
    ok(lib.rmm_resource_release(twin))
