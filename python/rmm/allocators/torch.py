"""RMM as PyTorch's CUDA allocator:
``torch.cuda.memory.change_current_allocator(rmm_torch_allocator)``.

``rmm_torch_allocator`` is a ``torch.cuda.memory.CUDAPluggableAllocator`` over two C functions
exported by the extension module ``rmm._ffi`` (its file is the library path):
``void *rmm_torch_allocate(ssize_t size, int device, cudaStream_t stream)`` and
``void rmm_torch_deallocate(void *ptr, ssize_t size, int device, cudaStream_t stream)``,
which allocate from and free to the per-device RMM resource of ``device`` through
librmm.so's C ABI. It is None when PyTorch is absent or has no CUDA device.

PyTorch's own ``torch.cuda.memory_stats()`` and ``max_memory_allocated()`` do not work with a
pluggable allocator; ``memory_stats()``, ``memory_allocated()``, ``max_memory_allocated()``,
``reset_peak_memory_stats()`` and ``reset_accumulated_memory_stats()`` here give PyTorch's
numbers for the memory PyTorch took through ``rmm_torch_allocator`` (the two C functions
count what they allocate and free, per device). PyTorch is imported only to read its
current device when ``device`` is None or ``"cuda"``, and only if already imported.
"""

import collections
import sys

__all__ = [
    "allocator_library_path",
    "max_memory_allocated",
    "memory_allocated",
    "memory_stats",
    "reset_accumulated_memory_stats",
    "reset_peak_memory_stats",
    "rmm_torch_allocator",
]

ALLOCATE_FUNCTION = "rmm_torch_allocate"
DEALLOCATE_FUNCTION = "rmm_torch_deallocate"


def allocator_library_path():
    """The path of the shared object exporting the two allocator functions."""
    import os

    from rmm import _ffi

    return os.path.abspath(_ffi.__file__)


def _current_device():
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            if torch.cuda.is_available():
                return int(torch.cuda.current_device())
        except Exception:  # a torch without CUDA, or one half-imported
            pass
    from rmm import _ffi

    return _ffi.get_current_device()


def _device_index(device):
    """The CUDA device number that ``device`` names, as PyTorch reads it: None (the current
    device), an int, ``"cuda"`` / ``"cuda:N"``, or a ``torch.device`` of type cuda."""
    if device is None:
        return _current_device()
    if isinstance(device, bool):
        raise TypeError(f"device must be an int, a str or a torch.device, not {device!r}")
    if isinstance(device, int):
        index = device
    elif isinstance(device, str):
        kind, _, number = device.partition(":")
        if kind != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        if not number:
            return _current_device()
        try:
            index = int(number)
        except ValueError:
            raise ValueError(f"Invalid device string: {device!r}") from None
    elif hasattr(device, "type") and hasattr(device, "index"):  # torch.device
        if device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        if device.index is None:
            return _current_device()
        index = int(device.index)
    else:
        raise TypeError(f"device must be an int, a str or a torch.device, not {device!r}")
    if index < 0:
        raise ValueError(f"Expected a non-negative device index, but got: {index}")
    return index


def memory_stats(device=None):
    """PyTorch's ``torch.cuda.memory_stats(device)`` for the memory PyTorch took through
    ``rmm_torch_allocator`` on ``device`` (None: the current device): an ordered dict, keys
    sorted, with the counters that mean here what they mean in PyTorch:

    - ``allocated_bytes.all.{current,peak,allocated,freed}``: bytes held by tensors now, the
      most held at once (since ``reset_peak_memory_stats``), allocated and freed in all;
    - ``allocation.all.{current,peak,allocated,freed}``: the same in allocations;
    - ``active_bytes.all.*`` and ``active.all.*``: the same numbers (RMM frees in stream
      order at once, so no freed block waits to become inactive);
    - ``requested_bytes.all.*``: the same numbers (the allocator asks the resource for the
      size PyTorch requested);
    - ``num_ooms``: allocations that failed for lack of memory.

    PyTorch's ``reserved_bytes``, segment, pool-kind (``large_pool``, ``small_pool``) and
    caching counters have no meaning here and are absent: the memory resource's own numbers
    (``rmm.mr.PoolMemoryResource.pool_size()``, ``rmm.statistics``) tell those.
    """
    from rmm import _ffi

    s = _ffi.torch_stats(_device_index(device))
    out = {}
    for prefix in ("allocated_bytes", "active_bytes", "requested_bytes"):
        out[f"{prefix}.all.current"] = s["bytes_current"]
        out[f"{prefix}.all.peak"] = s["bytes_peak"]
        out[f"{prefix}.all.allocated"] = s["bytes_allocated"]
        out[f"{prefix}.all.freed"] = s["bytes_freed"]
    for prefix in ("allocation", "active"):
        out[f"{prefix}.all.current"] = s["count_current"]
        out[f"{prefix}.all.peak"] = s["count_peak"]
        out[f"{prefix}.all.allocated"] = s["count_allocated"]
        out[f"{prefix}.all.freed"] = s["count_freed"]
    out["num_ooms"] = s["ooms"]
    return collections.OrderedDict(sorted(out.items()))


def memory_allocated(device=None):
    """PyTorch's ``torch.cuda.memory_allocated(device)``: bytes that PyTorch holds now
    through ``rmm_torch_allocator`` on ``device`` (None: the current device)."""
    from rmm import _ffi

    return _ffi.torch_stats(_device_index(device))["bytes_current"]


def max_memory_allocated(device=None):
    """PyTorch's ``torch.cuda.max_memory_allocated(device)``: the most bytes PyTorch held at
    once through ``rmm_torch_allocator`` on ``device`` (None: the current device) since the
    start or the last ``reset_peak_memory_stats``."""
    from rmm import _ffi

    return _ffi.torch_stats(_device_index(device))["bytes_peak"]


def reset_peak_memory_stats(device=None):
    """PyTorch's ``torch.cuda.reset_peak_memory_stats(device)``: the peaks of ``device``
    (None: the current device) start again from the current values."""
    from rmm import _ffi

    _ffi.torch_reset_peak(_device_index(device))


def reset_accumulated_memory_stats(device=None):
    """PyTorch's ``torch.cuda.reset_accumulated_memory_stats(device)``: the ``allocated`` and
    ``freed`` counters and ``num_ooms`` of ``device`` (None: the current device) start again
    from zero."""
    from rmm import _ffi

    _ffi.torch_reset_accumulated(_device_index(device))


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
