import pytest

import rmm
import rmm.mr as mr
from rmm import _ffi


def cuda():
    return mr.CudaMemoryResource()


def test_negative_sizes():
    r = cuda()
    with pytest.raises(OverflowError, match="non-negative"):
        r.allocate(-1)
    with pytest.raises(OverflowError):
        r.deallocate(0, -5)
    with pytest.raises(OverflowError):
        rmm.DeviceBuffer(size=-1)
    with pytest.raises(OverflowError):
        mr.PoolMemoryResource(r, initial_pool_size=-256)
    with pytest.raises(OverflowError):
        mr.LimitingResourceAdaptor(r, -1)
    b = rmm.DeviceBuffer(size=4)
    with pytest.raises(OverflowError):
        b.resize(-1)
    with pytest.raises(OverflowError):
        b.reserve(-1)


def test_wrong_types():
    r = cuda()
    with pytest.raises(TypeError):
        r.allocate("10")
    with pytest.raises(TypeError):
        r.allocate(1.5)
    with pytest.raises(TypeError):
        r.allocate(10, stream=0)
    with pytest.raises(TypeError):
        rmm.DeviceBuffer(size="10")
    with pytest.raises(TypeError):
        rmm.DeviceBuffer(size=10, mr="pool")
    with pytest.raises(TypeError):
        mr.PoolMemoryResource("cuda")
    with pytest.raises(TypeError):
        mr.StatisticsResourceAdaptor(None)
    with pytest.raises(TypeError):
        mr.set_current_device_resource(object())
    with pytest.raises(TypeError):
        mr.get_per_device_resource("0")
    with pytest.raises(TypeError):
        mr.CallbackMemoryResource(1, 2)
    with pytest.raises(TypeError):
        rmm.DeviceBuffer.to_device(12)
    with pytest.raises(TypeError):
        rmm.DeviceBuffer(10)  # keyword-only, as in RMM


def test_unknown_size_strings():
    with pytest.raises(ValueError, match="byte specification"):
        mr.PoolMemoryResource(cuda(), initial_pool_size="ten megabytes")
    with pytest.raises(ValueError, match="byte specification"):
        mr.CudaAsyncMemoryResource(initial_pool_size="1 XB")


def test_invalid_arguments_from_the_core():
    # pool sizes must be multiples of 256: the core says so, as a ValueError + RMMError
    with pytest.raises(ValueError) as info:
        mr.PoolMemoryResource(cuda(), initial_pool_size=1000)
    assert isinstance(info.value, rmm.RMMError)
    assert info.value.errcode == 1
    assert "1000" in str(info.value)


def test_released_handle():
    h = _ffi.cuda_create()
    h.release()
    assert h.released
    with pytest.raises(ValueError, match="released"):
        _ffi.allocate(h, 10)
    with pytest.raises(ValueError, match="released"):
        _ffi.pool_create(h, 0, 0)
    h.release()  # idempotent


def test_released_resource_object():
    r = cuda()
    r._handle.release()
    with pytest.raises(ValueError, match="released"):
        r.allocate(10)
    with pytest.raises(ValueError, match="released"):
        mr.StatisticsResourceAdaptor(r)
    with pytest.raises(ValueError, match="released"):
        rmm.DeviceBuffer(size=1, mr=r)


def test_abstract_bases():
    with pytest.raises(TypeError):
        mr.DeviceMemoryResource()
    with pytest.raises(TypeError):
        mr.UpstreamResourceAdaptor(cuda())


def test_resources_do_not_pickle():
    import pickle

    with pytest.raises(TypeError):
        pickle.dumps(cuda())


def test_wrong_kind_query():
    # a statistics query on a pool: the core rejects the handle's kind
    pool = mr.PoolMemoryResource(cuda(), 1 << 20)
    with pytest.raises(ValueError):
        _ffi.statistics_counters(pool._handle)
