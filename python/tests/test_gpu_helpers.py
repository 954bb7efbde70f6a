"""rmm._cuda.gpu (RMM's device helpers) over librmm.so: versions, device attributes by
CUDA's numbers, devices, and CUDARuntimeError with the runtime's status."""

import enum
import pickle

import pytest

import rmm
import rmm.mr as mr
from rmm import _ffi
from rmm._cuda import gpu
from rmm._cuda.gpu import CUDARuntimeError

on_host = pytest.mark.skipif(
    _ffi.runtime_name() != "host", reason="values of the host emulation"
)


class cudaDeviceAttr(enum.IntEnum):
    """The members of cuda-python's enum that these tests use (CUDA's numbers)."""

    cudaDevAttrWarpSize = 10
    cudaDevAttrMultiProcessorCount = 16
    cudaDevAttrComputeCapabilityMajor = 75
    cudaDevAttrPageableMemoryAccess = 88
    cudaDevAttrMemoryPoolsSupported = 115


class ValueEnum:
    """An enum member that is not an int but carries one (as cuda-bindings' newer enums)."""

    def __init__(self, value):
        self.value = value


def test_versions():
    assert isinstance(gpu.runtimeGetVersion(), int) and gpu.runtimeGetVersion() > 0
    assert isinstance(gpu.driverGetVersion(), int) and gpu.driverGetVersion() >= 0


@on_host
def test_versions_of_the_host_emulation():
    # The host emulation reports the CUDA version whose behaviour it emulates.
    assert gpu.runtimeGetVersion() == 13000
    assert gpu.driverGetVersion() == 13000


def test_device_attribute_as_int_and_enum():
    dev = gpu.getDevice()
    warp = gpu.getDeviceAttribute(10, dev)
    assert warp in (32, 64)
    assert gpu.getDeviceAttribute(cudaDeviceAttr.cudaDevAttrWarpSize, dev) == warp
    assert gpu.getDeviceAttribute(ValueEnum(10), dev) == warp
    assert gpu.getDeviceAttribute(cudaDeviceAttr.cudaDevAttrMultiProcessorCount, dev) >= 1
    assert gpu.getDeviceAttribute(cudaDeviceAttr.cudaDevAttrComputeCapabilityMajor, dev) >= 1


def test_device_attributes_agree_with_the_resources():
    dev = gpu.getDevice()
    pageable = gpu.getDeviceAttribute(cudaDeviceAttr.cudaDevAttrPageableMemoryAccess, dev)
    pools = gpu.getDeviceAttribute(cudaDeviceAttr.cudaDevAttrMemoryPoolsSupported, dev)
    if pageable == 1:
        mr.SystemMemoryResource()  # RMM's tests decide on this attribute
    if pools == 1:
        mr.CudaAsyncMemoryResource()


@on_host
def test_device_attributes_of_the_host_emulation():
    assert gpu.getDeviceAttribute(10, 0) == 32
    assert gpu.getDeviceAttribute(75, 0) == 9
    assert gpu.getDeviceAttribute(76, 0) == 0
    assert gpu.getDeviceAttribute(88, 0) == 1
    assert gpu.getDeviceAttribute(115, 0) == 1
    assert gpu.getDeviceAttribute(119, 0) == 0  # no IPC handle types


def test_device_attribute_errors():
    count = gpu.getDeviceCount()
    with pytest.raises(CUDARuntimeError) as e:
        gpu.getDeviceAttribute(10, count)
    assert e.value.status == 101  # cudaErrorInvalidDevice
    assert str(e.value).startswith("cudaErrorInvalidDevice: ")
    assert isinstance(e.value, RuntimeError)
    with pytest.raises(CUDARuntimeError) as e:
        gpu.getDeviceAttribute(0, 0)  # no attribute 0
    assert e.value.status == 1  # cudaErrorInvalidValue
    assert "cudaErrorInvalidValue" in e.value.msg
    with pytest.raises(CUDARuntimeError) as e:
        gpu.getDeviceAttribute(1 << 40, 0)
    assert e.value.status == 1
    with pytest.raises(TypeError):
        gpu.getDeviceAttribute("10", 0)
    with pytest.raises(TypeError):
        gpu.getDeviceAttribute(True, 0)
    with pytest.raises(TypeError):
        gpu.getDeviceAttribute(ValueEnum("10"), 0)
    with pytest.raises(TypeError):
        gpu.getDeviceAttribute(10, None)


def test_devices():
    count = gpu.getDeviceCount()
    assert count >= 1
    dev = gpu.getDevice()
    assert 0 <= dev < count
    gpu.setDevice(dev)
    assert gpu.getDevice() == dev
    with pytest.raises(CUDARuntimeError) as e:
        gpu.setDevice(count)
    assert e.value.status == 101
    with pytest.raises(CUDARuntimeError) as e:
        gpu.setDevice(-1)
    assert e.value.status == 101
    assert gpu.getDevice() == dev
    with pytest.raises(TypeError):
        gpu.setDevice("0")


def test_runtime_error_pickles_and_names_the_status():
    e = CUDARuntimeError(100)
    assert e.status == 100 and str(e) == "cudaErrorNoDevice: no CUDA-capable device is detected"
    again = pickle.loads(pickle.dumps(e))
    assert type(again) is CUDARuntimeError
    assert (again.status, again.msg, str(again)) == (e.status, e.msg, str(e))
    e = CUDARuntimeError(101, "custom")
    assert str(pickle.loads(pickle.dumps(e))) == "custom"
    assert str(CUDARuntimeError(12345)).startswith("cudaError 12345")
    d = gpu.CUDADriverError(1)
    assert d.status == 1 and isinstance(pickle.loads(pickle.dumps(d)), gpu.CUDADriverError)


def test_runtime_code_on_librmm_errors():
    # Every failure of a C call carries the runtime's code (0: not the runtime's failure).
    with pytest.raises(rmm.RMMError) as e:
        _ffi.device_get_attribute(10, gpu.getDeviceCount())
    assert e.value.runtime_code == 101
    with pytest.raises(rmm.RMMError) as e:
        _ffi.percent_of_free_device_memory(150)
    assert e.value.runtime_code == 0
    err = gpu._runtime_error(e.value)
    assert err.status == 1 and "150" in err.msg  # an invalid argument: cudaErrorInvalidValue


def test_module_names():
    for name in gpu.__all__:
        assert hasattr(gpu, name)
    assert rmm._cuda.gpu is gpu


def test_device_name_and_properties():
    name = gpu.deviceGetName(0)
    assert isinstance(name, str) and name
    props = gpu.getDeviceProperties(0)
    # cudaDeviceProp's name is bytes (str in some cuda-python versions); ours is bytes.
    got = props.name
    if isinstance(got, bytes):
        got = got.split(b"\0")[0].decode()
    assert got == name
    assert props.major == gpu.getDeviceAttribute(cudaDeviceAttr.cudaDevAttrComputeCapabilityMajor, 0)
    assert props.multiProcessorCount == gpu.getDeviceAttribute(
        cudaDeviceAttr.cudaDevAttrMultiProcessorCount, 0
    )
    assert props.warpSize == gpu.getDeviceAttribute(cudaDeviceAttr.cudaDevAttrWarpSize, 0)
    assert props.totalGlobalMem > 0
    # The current device is unchanged.
    assert gpu.getDevice() == 0


@on_host
def test_device_name_and_properties_of_the_host_emulation():
    assert gpu.deviceGetName(0) == "rmm-rs host emulation device 0"
    props = gpu.getDeviceProperties(0)
    assert isinstance(props, gpu.DeviceProperties)
    assert (props.major, props.minor, props.warpSize) == (9, 0, 32)
    assert props.totalGlobalMem == _ffi.available_device_memory()[1]
    assert "host emulation" in repr(props)


def test_device_name_and_properties_errors():
    count = gpu.getDeviceCount()
    for f in (gpu.deviceGetName, gpu.getDeviceProperties):
        with pytest.raises(CUDARuntimeError) as e:
            f(count)
        assert int(e.value.status) == 101  # cudaErrorInvalidDevice
        with pytest.raises(CUDARuntimeError) as e:
            f(2**40)
        assert int(e.value.status) == 101
        with pytest.raises(TypeError):
            f("0")
