"""Host stand-in of ``numba.cuda`` over rmm's host runtime.

Device arrays are ``rmm.DeviceBuffer``s from the current memory resource, which is what
Numba allocates with RMM's memory manager set; streams are rmm streams with Numba's
``.handle``. Only what RMM's own tests call."""

import ctypes

import numpy as np

import rmm
from rmm import _ffi

_memory_manager = None


def set_memory_manager(mm):
    """Recorded only: every device array here comes from rmm's current resource."""
    global _memory_manager
    _memory_manager = mm


def is_available():
    return True


class Stream:
    def __init__(self, handle, owned):
        self.handle = ctypes.c_void_p(handle or None)
        self._owned = owned

    def __int__(self):
        return self.handle.value or 0

    def synchronize(self):
        _ffi.stream_synchronize(int(self))

    def __del__(self):
        if getattr(self, "_owned", False):
            self._owned = False
            _ffi.stream_destroy(int(self))


def default_stream():
    return Stream(0, owned=False)


def stream():
    return Stream(_ffi.stream_create(0), owned=True)


class DeviceNDArray:
    def __init__(self, shape, dtype):
        self.dtype = np.dtype(dtype)
        self.shape = tuple(shape)
        self.size = int(np.prod(self.shape, dtype=np.int64))
        self.nbytes = self.size * self.dtype.itemsize
        self._buffer = rmm.DeviceBuffer(size=self.nbytes)

    @property
    def __cuda_array_interface__(self):
        return {
            "shape": self.shape,
            "strides": None,
            "typestr": self.dtype.str,
            "data": (self._buffer.ptr, False),
            "version": 3,
        }

    def copy_to_device(self, other):
        if isinstance(other, DeviceNDArray):
            rmm.pylibrmm.device_buffer.copy_device_to_ptr(
                other._buffer.ptr, self._buffer.ptr, self.nbytes
            )
        else:
            self._buffer.copy_from_host(np.ascontiguousarray(other).view("u1").ravel())

    def copy_to_host(self):
        out = np.empty(self.shape, self.dtype)
        if self.nbytes:
            self._buffer.copy_to_host(out.view("u1").reshape(-1))
        return out


def to_device(ary, stream=0):
    ary = np.ascontiguousarray(ary)
    d = DeviceNDArray(ary.shape, ary.dtype)
    d.copy_to_device(ary)
    return d


def device_array_like(ary, stream=0):
    return DeviceNDArray(ary.shape, ary.dtype)
