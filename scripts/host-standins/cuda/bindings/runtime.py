"""Host stand-in of ``cuda.bindings.runtime`` over rmm's host runtime.

Only what RMM's own tests call. Calls return ``(cudaError_t, value...)`` tuples as
cuda-bindings does; what the host runtime lacks skips the calling test."""

from enum import IntEnum

import rmm
from rmm import _ffi

cudaInvalidDeviceId = -2


class cudaError_t(IntEnum):
    cudaSuccess = 0
    cudaErrorInvalidValue = 1
    cudaErrorInvalidDevice = 101
    cudaErrorNotSupported = 801


class cudaDeviceAttr(IntEnum):
    # CUDA's numbers (cudaDeviceAttr), which rmm._ffi.device_get_attribute takes.
    cudaDevAttrIntegrated = 18
    cudaDevAttrPageableMemoryAccess = 88
    cudaDevAttrConcurrentManagedAccess = 89
    cudaDevAttrMemoryPoolsSupported = 115
    cudaDevAttrMemoryPoolSupportedHandleTypes = 119


class cudaMemRangeAttribute(IntEnum):
    cudaMemRangeAttributeReadMostly = 1
    cudaMemRangeAttributePreferredLocation = 2
    cudaMemRangeAttributeAccessedBy = 3
    cudaMemRangeAttributeLastPrefetchLocation = 4


class cudaMemAllocationHandleType(IntEnum):
    cudaMemHandleTypeNone = 0
    cudaMemHandleTypePosixFileDescriptor = 1
    cudaMemHandleTypeFabric = 8


class cudaMemAllocationType(IntEnum):
    cudaMemAllocationTypeInvalid = 0
    cudaMemAllocationTypePinned = 1


class cudaMemLocationType(IntEnum):
    cudaMemLocationTypeInvalid = 0
    cudaMemLocationTypeDevice = 1


class cudaMemPool_t:
    """A pool handle: ``int()`` gives its address, as cuda-bindings' does."""

    def __init__(self, address=0):
        self._address = int(address)

    def __int__(self):
        return self._address

    def getPtr(self):
        return self._address

    def __repr__(self):
        return f"<cudaMemPool_t {self._address:#x}>"


class _Location:
    def __init__(self):
        self.type = cudaMemLocationType.cudaMemLocationTypeInvalid
        self.id = 0


class cudaMemPoolProps:
    def __init__(self):
        self.allocType = cudaMemAllocationType.cudaMemAllocationTypeInvalid
        self.handleTypes = cudaMemAllocationHandleType.cudaMemHandleTypeNone
        self.location = _Location()


def _skip(reason):
    import pytest

    pytest.skip(f"host runtime (RMM_RUNTIME=host): {reason}")


def _call(f, *args):
    try:
        return cudaError_t.cudaSuccess, f(*args)
    except rmm.RMMError as e:
        return cudaError_t(getattr(e, "runtime_code", 1) or 1), None


def cudaGetDevice():
    return _call(_ffi.get_current_device)


def cudaDeviceGetAttribute(attr, device):
    return _call(_ffi.device_get_attribute, int(attr), int(device))


def cudaDeviceGetDefaultMemPool(device):
    err, address = _call(_ffi.device_default_mem_pool, int(device))
    return err, (None if address is None else cudaMemPool_t(address))


def cudaMemPoolCreate(props):
    _skip("no cudaMemPoolCreate (only the device's default pool)")


def cudaMemPoolDestroy(pool):
    _skip("no cudaMemPoolDestroy")


def cudaMemRangeGetAttribute(data_size, attribute, ptr, count):
    _skip("no cudaMemRangeGetAttribute (prefetch locations are not recorded)")
