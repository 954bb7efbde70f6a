"""``DeviceBuffer``: untyped device memory from a memory resource (kept alive)."""

import numpy as np

from rmm import _ffi
from rmm import _generation as _gen
from rmm.pylibrmm import memory_resource as _mr
from rmm.pylibrmm.helper import check_pointer, check_size
from rmm.pylibrmm.stream import DEFAULT_STREAM, as_stream


def _resource_bytes(size):
    """The bytes a buffer of ``size`` asks its resource for, as the API generation in force
    did: RMM 25.02 and 25.10 allocated through a C++ resource reference that rounded the
    size up to a multiple of 16 (their statistics count 32 for a buffer of 20); RMM 26.06
    and later ask for exactly ``size``. The buffer's ``size`` and ``capacity()`` are the
    unrounded numbers in every generation, as in RMM."""
    if size:
        _gen.allocated = True
    multiple = _gen.buffer_rounding
    return size if multiple == 1 else -(-size // multiple) * multiple


def _host_view(ary, writable):
    """(numpy uint8 view, address, nbytes) of a host buffer, which must be what RMM's Cython
    functions take (``unsigned char[::1]``): one dimension of unsigned bytes, contiguous."""
    try:
        view = memoryview(ary)
    except TypeError:
        raise TypeError(f"expected a bytes-like object, not {type(ary).__name__}") from None
    if view.format.lstrip("@=<>!") != "B":
        raise ValueError(
            f"Buffer dtype mismatch, expected 'unsigned char' but got format {view.format!r}"
        )
    if view.ndim != 1:
        raise ValueError(f"Buffer has wrong number of dimensions (expected 1, got {view.ndim})")
    if not view.c_contiguous:
        raise ValueError("the host buffer must be contiguous")
    if writable and view.readonly:
        raise ValueError("the host buffer must be writable")
    arr = np.frombuffer(view, dtype=np.uint8) if view.nbytes else np.empty(0, np.uint8)
    return arr, (arr.ctypes.data if arr.size else 0), view.nbytes


class DeviceBuffer:
    """Untyped device memory of ``size`` bytes from ``mr`` (default: the current device's
    resource), allocated on ``stream``. With ``ptr``, ``size`` bytes at that address (host
    or device) are copied in.

    The buffer keeps its resource alive and frees its memory when it goes.
    """

    __slots__ = {
        "_alloc": "the rmm._ffi.Allocation owning the memory",
        "_size": "size in bytes",
        "_capacity": "capacity in bytes (the resource was asked for _resource_bytes of it)",
        "mr": "the memory resource the memory came from (kept alive by the buffer)",
        "stream": "the stream the memory was allocated on",
        "__weakref__": None,
    }

    def __init__(self, *, ptr=0, size=0, stream=DEFAULT_STREAM, mr=None):
        size = check_size(size, "size")
        ptr = check_pointer(ptr if ptr is not None else 0, "ptr")
        stream = as_stream(stream)
        if mr is None:
            mr = _mr.get_current_device_resource()
        elif not isinstance(mr, _mr.DeviceMemoryResource):
            raise TypeError(f"mr must be a DeviceMemoryResource, not {type(mr).__name__}")
        self.mr = mr
        self.stream = stream
        self._alloc = _ffi.Allocation(mr._h(), _resource_bytes(size), stream._handle)
        self._size = size
        self._capacity = size
        if ptr and size:
            _ffi.memcpy(self._alloc.ptr, ptr, size, stream._handle, stream.is_default())

    def __del__(self):
        # Free here rather than in the Allocation's destructor: `free()` releases the GIL
        # while librmm.so deallocates (which may wait for a lock that a thread running a
        # Python callback holds), and memory from a CallbackMemoryResource chain is freed
        # while the resources' Python objects are intact (also when the buffer is part of a
        # garbage cycle, see memory_resource._free_vouched).
        try:
            alloc = self._alloc
            if alloc.ptr:
                mr = self.mr
                if mr._has_callbacks:
                    _mr._free_vouched(alloc, mr)
                else:
                    alloc.free()
        except Exception:
            pass  # a half-built buffer, or interpreter shutdown: the Allocation frees

    # -- properties ------------------------------------------------------------------------

    @property
    def ptr(self):
        """Address of the memory (0 when empty)."""
        return self._alloc.ptr

    @property
    def size(self):
        """Size in bytes."""
        return self._size

    @property
    def nbytes(self):
        """Size in bytes."""
        return self._size

    def capacity(self):
        """Bytes the buffer can hold without reallocating (at least ``size``)."""
        return self._capacity

    def __len__(self):
        return self._size

    def __sizeof__(self):
        return self._size

    def __bytes__(self):
        return self.tobytes()

    def __repr__(self):
        return f"<rmm.DeviceBuffer size={self._size} ptr={self.ptr:#x}>"

    @property
    def __cuda_array_interface__(self):
        return {
            "data": (self.ptr, False),
            "shape": (self._size,),
            "strides": None,
            "typestr": "|u1",
            "version": 0,
        }

    # -- construction ------------------------------------------------------------------------

    @staticmethod
    def to_device(b, stream=DEFAULT_STREAM, mr=None):
        """A new ``DeviceBuffer`` holding a copy of the host bytes-like ``b``."""
        return to_device(b, stream=stream, mr=mr)

    def __reduce__(self):
        # A numpy array, as RMM's: pickle protocol 5 can then pass it out of band.
        return (to_device, (self.copy_to_host(),))

    def copy(self):
        """A new buffer (same resource and stream) with a copy of the contents."""
        new = DeviceBuffer(size=self._size, stream=self.stream, mr=self.mr)
        _ffi.memcpy(new.ptr, self.ptr, self._size, self.stream._handle, True)
        return new

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    # -- copies ------------------------------------------------------------------------------

    def tobytes(self, stream=DEFAULT_STREAM):
        """The contents as ``bytes``."""
        stream = as_stream(stream)
        return _ffi.read_bytes(self.ptr, self._size, stream._handle)

    def copy_to_host(self, ary=None, stream=DEFAULT_STREAM):
        """Copy the contents into the host buffer ``ary`` (at least ``size`` bytes) or,
        when None, into a new numpy ``uint8`` array; returns it."""
        stream = as_stream(stream)
        if ary is None:
            ary = np.empty((self._size,), dtype="u1")
        _, addr, n = _host_view(ary, writable=True)
        if n < self._size:
            raise ValueError(f"Argument `ary` is too small. Need space for {self._size} bytes.")
        _ffi.memcpy(addr, self.ptr, self._size, stream._handle, True)
        return ary

    def copy_from_host(self, ary, stream=DEFAULT_STREAM):
        """Copy the host bytes-like ``ary`` (at most ``size`` bytes) to the start of the
        buffer."""
        stream = as_stream(stream)
        arr, addr, n = _host_view(ary, writable=False)
        if n > self._size:
            raise ValueError(f"Argument `ary` is too large. Need space for {n} bytes.")
        _ffi.memcpy(self.ptr, addr, n, stream._handle, True)
        del arr

    def copy_from_device(self, cuda_ary, stream=DEFAULT_STREAM):
        """Copy from a C-contiguous device array (``__cuda_array_interface__``) to the start
        of the buffer."""
        stream = as_stream(stream)
        try:
            iface = cuda_ary.__cuda_array_interface__
        except AttributeError:
            raise ValueError(
                "Expected object to support `__cuda_array_interface__` protocol"
            ) from None
        shape = tuple(iface["shape"])
        itemsize = np.dtype(iface["typestr"]).itemsize
        n = itemsize
        for dim in shape:
            n *= dim
        strides = iface.get("strides")
        if strides is not None:
            expected = itemsize
            for dim, stride in reversed(list(zip(shape, strides))):
                if dim > 1 and stride != expected:
                    raise ValueError("Only C-contiguous arrays can be copied")
                expected *= dim
        if n > self._size:
            raise ValueError(f"Argument `cuda_ary` is too large. Need space for {n} bytes.")
        _ffi.memcpy(self.ptr, int(iface["data"][0]), n, stream._handle, True)

    # -- size ----------------------------------------------------------------------------------

    def _reallocate(self, capacity, stream):
        new = _ffi.Allocation(self.mr._h(), _resource_bytes(capacity), stream._handle)
        _ffi.memcpy(new.ptr, self.ptr, min(self._size, capacity), stream._handle, True)
        old, self._alloc = self._alloc, new
        self._capacity = capacity
        old.free()

    def reserve(self, new_capacity, stream=DEFAULT_STREAM):
        """Make the capacity at least ``new_capacity`` bytes (contents kept)."""
        new_capacity = check_size(new_capacity, "new_capacity")
        stream = as_stream(stream)
        if new_capacity > self._capacity:
            self._reallocate(new_capacity, stream)

    def resize(self, new_size, stream=DEFAULT_STREAM):
        """Change the size to ``new_size`` bytes (contents kept up to the smaller size;
        memory is reallocated only when the capacity is too small)."""
        new_size = check_size(new_size, "new_size")
        stream = as_stream(stream)
        if new_size > self._capacity:
            self._reallocate(new_size, stream)
        self._size = new_size

    def prefetch(self, device=None, stream=None):
        """Prefetch the buffer's memory to ``device`` on ``stream`` (``cudaMemPrefetchAsync``).

        Meant for managed (unified) memory; for memory that is not managed this is a no-op.

        Parameters
        ----------
        device : int, optional
            The device to prefetch to; the current device by default. -1
            (``cudaCpuDeviceId``) prefetches to the host.
        stream : Stream, optional
            The stream to prefetch on; the buffer's stream by default.
        """
        if device is None:
            device = _ffi.get_current_device()
        elif isinstance(device, bool) or not hasattr(device, "__index__"):
            raise TypeError(f"device must be an int, not {type(device).__name__}")
        else:
            device = device.__index__()
        stream = self.stream if stream is None else as_stream(stream)
        _ffi.prefetch(self.ptr, self._size, device, stream._handle)


def to_device(b, stream=DEFAULT_STREAM, mr=None):
    """A new ``DeviceBuffer`` holding a copy of the host bytes-like ``b``."""
    stream = as_stream(stream)
    arr, addr, n = _host_view(b, writable=False)
    buf = DeviceBuffer(size=n, stream=stream, mr=mr)
    _ffi.memcpy(buf.ptr, addr, n, stream._handle, True)
    del arr
    return buf


def copy_ptr_to_host(db, hb, stream=DEFAULT_STREAM):
    """Copy ``len(hb)`` bytes from device address ``db`` into the host buffer ``hb``."""
    stream = as_stream(stream)
    _, addr, n = _host_view(hb, writable=True)
    _ffi.memcpy(addr, check_pointer(db, "db"), n, stream._handle, True)


def copy_host_to_ptr(hb, db, stream=DEFAULT_STREAM):
    """Copy the host buffer ``hb`` to device address ``db``."""
    stream = as_stream(stream)
    _, addr, n = _host_view(hb, writable=False)
    _ffi.memcpy(check_pointer(db, "db"), addr, n, stream._handle, True)


def copy_device_to_ptr(d_src, d_dst, count, stream=DEFAULT_STREAM):
    """Copy ``count`` bytes between device addresses."""
    stream = as_stream(stream)
    _ffi.memcpy(
        check_pointer(d_dst, "d_dst"),
        check_pointer(d_src, "d_src"),
        check_size(count, "count"),
        stream._handle,
        True,
    )
