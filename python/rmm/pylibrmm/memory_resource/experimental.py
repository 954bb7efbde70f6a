"""Experimental memory resources (RMM 26.06's ``rmm.pylibrmm.memory_resource.experimental``)."""

from rmm import _ffi
from rmm.pylibrmm.memory_resource import _memory_resource as _impl

__all__ = ["CudaAsyncManagedMemoryResource"]


class CudaAsyncManagedMemoryResource(_impl.DeviceMemoryResource):
    """Stream-ordered managed memory (``cudaMallocFromPoolAsync`` from the device's default
    managed pool), reachable from the host and the device. Needs a runtime with managed
    pools (CUDA 13 or later and concurrent managed access); elsewhere construction raises
    a ``NotImplementedError`` (a ``RuntimeError``) saying so."""

    def __init__(self):
        _impl._register(self, _ffi.async_managed_create())

    def pool_handle(self):
        """The address of the managed pool this resource allocates from."""
        return _ffi.async_pool_handle(self._h())


# Resources set from C or C++ of this kind come back to Python as this class.
_impl._CLASSES["cuda_async_managed_memory_resource"] = CudaAsyncManagedMemoryResource
