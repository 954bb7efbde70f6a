"""RMM as Numba's device memory manager (an EMM plugin).

Use ``numba.cuda.set_memory_manager(RMMNumbaManager)``, or set the environment variable
``NUMBA_CUDA_MEMORY_MANAGER=rmm.allocators.numba`` (Numba then takes this module's
``_numba_memory_manager``). Both are None when Numba is not installed.

Works with the numba-cuda package (whose driver always uses cuda-bindings: the device pointer
is handed over as a ``CUdeviceptr``) and with older Numba built on either binding.
"""

import ctypes

from rmm.pylibrmm.device_buffer import DeviceBuffer

__all__ = ["RMMNumbaManager"]

try:
    from numba import cuda as _cuda
    from numba.cuda import HostOnlyCUDAMemoryManager, MemoryPointer
except ImportError:
    _cuda = None


def _make_emm_plugin_finalizer(key, allocations):
    """The finalizer of one allocation: forget its buffer, which frees the memory.

    ``allocations`` may already have been cleared by a context reset (at exit, say); the
    allocation is then gone already and nothing is done."""

    def finalizer():
        allocations.pop(key, None)

    return finalizer


def _driver_uses_cuda_bindings(drv):
    """Whether this Numba's driver works with cuda-bindings objects (else ctypes)."""
    flag = getattr(drv, "USE_NV_BINDING", None)
    if flag is not None:  # older Numba: either binding, chosen by configuration
        return bool(flag)
    return True  # numba-cuda: cuda-bindings only


def _device_pointer(address):
    """``address`` as the device-pointer object this Numba's ``MemoryPointer`` expects."""
    drv = _cuda.cudadrv.driver
    if _driver_uses_cuda_bindings(drv):
        binding = getattr(drv, "binding", None)
        if binding is not None and hasattr(binding, "CUdeviceptr"):
            return binding.CUdeviceptr(address)
        try:
            from cuda.bindings.driver import CUdeviceptr
        except ImportError:
            return int(address)
        return CUdeviceptr(address)
    return ctypes.c_uint64(address)


if _cuda is None:
    RMMNumbaManager = None
else:
    _IpcMixin = getattr(_cuda, "GetIpcHandleMixin", None)
    _bases = (HostOnlyCUDAMemoryManager,) if _IpcMixin is None else (
        _IpcMixin,
        HostOnlyCUDAMemoryManager,
    )

    class RMMNumbaManager(*_bases):
        """Numba External Memory Management plugin allocating device memory from the
        current RMM device resource (device memory only; host memory stays Numba's).

        See https://numba.readthedocs.io/en/stable/cuda/external-memory.html.
        """

        def initialize(self):
            """Nothing to set up per context: allocations go to RMM's current resource."""

        def memalloc(self, size):
            """Allocate ``size`` bytes as an ``rmm.DeviceBuffer``; the returned
            ``numba.cuda.MemoryPointer`` keeps it alive until Numba finalizes it."""
            buf = DeviceBuffer(size=size)
            address = int(buf.ptr)
            finalizer = None
            if address:
                # self.allocations (from HostOnlyCUDAMemoryManager) is cleared on a
                # context reset; the finalizer removes the entry otherwise.
                self.allocations[address] = buf
                finalizer = _make_emm_plugin_finalizer(address, self.allocations)
            return MemoryPointer(self.context, _device_pointer(address), size, finalizer=finalizer)

        if _IpcMixin is None:

            def get_ipc_handle(self, memory):
                """IPC handles need Numba's ``GetIpcHandleMixin``, absent here."""
                raise NotImplementedError("this Numba has no GetIpcHandleMixin")

        def get_memory_info(self):
            """Not available: RMM's current resource (a pool, say) decides what is free."""
            raise NotImplementedError()

        @property
        def interface_version(self):
            """The EMM interface version implemented (1)."""
            return 1

    del _bases

# NUMBA_CUDA_MEMORY_MANAGER=rmm.allocators.numba makes Numba use this.
_numba_memory_manager = RMMNumbaManager
