"""RMM as PyTorch's CUDA allocator:
``torch.cuda.memory.change_current_allocator(rmm_torch_allocator)``.

``rmm_torch_allocator`` is a ``torch.cuda.memory.CUDAPluggableAllocator`` over two C functions
exported by the extension module ``rmm._ffi`` (its file is the library path):
``void *rmm_torch_allocate(ssize_t size, int device, cudaStream_t stream)`` and
``void rmm_torch_deallocate(void *ptr, ssize_t size, int device, cudaStream_t stream)``,
which allocate from and free to the per-device RMM resource of ``device`` through
librmm.so's C ABI. It is None when PyTorch is absent or has no CUDA device.
"""

__all__ = ["rmm_torch_allocator", "allocator_library_path"]

ALLOCATE_FUNCTION = "rmm_torch_allocate"
DEALLOCATE_FUNCTION = "rmm_torch_deallocate"


def allocator_library_path():
    """The path of the shared object exporting the two allocator functions."""
    import os

    from rmm import _ffi

    return os.path.abspath(_ffi.__file__)


rmm_torch_allocator = None

try:
    from torch.cuda.memory import CUDAPluggableAllocator
except ImportError:
    pass
else:
    from torch.cuda import is_available as _is_available

    if _is_available():
        rmm_torch_allocator = CUDAPluggableAllocator(
            allocator_library_path(),
            alloc_fn_name=ALLOCATE_FUNCTION,
            free_fn_name=DEALLOCATE_FUNCTION,
        )
    del _is_available
