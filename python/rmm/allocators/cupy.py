"""RMM as CuPy's allocator: ``cupy.cuda.set_allocator(rmm_cupy_allocator)``."""

from rmm.pylibrmm.device_buffer import DeviceBuffer
from rmm.pylibrmm.stream import Stream

try:
    import cupy
except ImportError:
    cupy = None

__all__ = ["rmm_cupy_allocator"]


def rmm_cupy_allocator(nbytes):
    """Allocate ``nbytes`` for CuPy from the current RMM device resource.

    The memory is a ``rmm.DeviceBuffer`` allocated in stream order on CuPy's current stream;
    the returned ``cupy.cuda.MemoryPointer`` keeps the buffer alive (it is the owner of the
    ``cupy.cuda.UnownedMemory``), so the memory goes back to RMM when CuPy drops it.

    Raises ``ModuleNotFoundError`` when CuPy is not installed.

    Examples
    --------
    >>> import cupy
    >>> from rmm.allocators.cupy import rmm_cupy_allocator
    >>> cupy.cuda.set_allocator(rmm_cupy_allocator)
    """
    if cupy is None:
        raise ModuleNotFoundError("No module named 'cupy'")
    stream = Stream(obj=cupy.cuda.get_current_stream())
    buf = DeviceBuffer(size=nbytes, stream=stream)
    # With a real pointer CuPy finds the device itself (-1); a null pointer (zero bytes)
    # has no device, so name the current one.
    device_id = -1 if buf.ptr else cupy.cuda.device.get_device_id()
    mem = cupy.cuda.UnownedMemory(ptr=buf.ptr, size=buf.size, owner=buf, device_id=device_id)
    return cupy.cuda.memory.MemoryPointer(mem, 0)
