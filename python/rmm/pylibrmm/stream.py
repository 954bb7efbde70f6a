"""Streams: ``Stream`` wraps a stream handle (``cudaStream_t`` / ``hipStream_t``)."""

import weakref
from enum import IntEnum

from rmm import _ffi, _generation


class CudaStreamFlags(IntEnum):
    """Flags of a new stream (RMM 26.06): ``SYNC_DEFAULT`` synchronizes with the legacy
    default stream, ``NON_BLOCKING`` does not (``cudaStreamNonBlocking``)."""

    SYNC_DEFAULT = 0
    NON_BLOCKING = 1


# The module's own name for it: the public one is gated (RMM 26.06 added it).
_Flags = CudaStreamFlags


def _check_flags(flags):
    try:
        return _Flags(flags)
    except ValueError:
        raise ValueError(
            f"flags must be a CudaStreamFlags (SYNC_DEFAULT=0 or NON_BLOCKING=1), not {flags!r}"
        ) from None


class Stream:
    """A GPU stream.

    ``Stream()`` creates a new stream (destroyed when the object goes; ``flags`` picks
    ``CudaStreamFlags``); ``Stream(s)`` with another ``Stream``, an object of the CUDA stream
    protocol (``__cuda_stream__``, version 0), a CuPy stream (``.ptr``), a Numba stream
    (``.handle``) or an int handle wraps that stream without owning it.
    """

    __slots__ = ("_handle", "_owner", "__weakref__")

    def __init__(self, obj=None, flags=None):
        self._owner = None
        if obj is not None and flags is not None:
            # Flags only mean something to a stream created here.
            raise ValueError(
                "flags may only be specified when obj is None; flags cannot be applied to "
                "an existing stream."
            )
        if obj is None:
            flags = _Flags.SYNC_DEFAULT if flags is None else _check_flags(flags)
            handle = _ffi.stream_create(int(flags))
            self._handle = handle
            self._owner = weakref.finalize(self, _ffi.stream_destroy, handle)
        elif isinstance(obj, Stream):
            self._handle = obj._handle
            self._owner = obj
        elif hasattr(obj, "__cuda_stream__"):
            version, handle = obj.__cuda_stream__()
            if version != 0:
                raise NotImplementedError(
                    "RMM does not currently support the CUDA Stream Protocol version: "
                    f"'{version}'."
                )
            self._handle = int(handle)
            self._owner = obj
        elif isinstance(obj, int) and not isinstance(obj, bool):
            if obj < 0:
                raise ValueError(f"a stream handle must be non-negative, got {obj}")
            self._handle = obj
        elif hasattr(obj, "ptr") and not callable(obj.ptr):
            # CuPy stream.
            self._handle = int(obj.ptr)
            self._owner = obj
        elif hasattr(obj, "handle"):
            # Numba stream: its handle is a ctypes c_void_p (or an int).
            h = obj.handle
            h = getattr(h, "value", h)
            self._handle = int(h or 0)
            self._owner = obj
        else:
            raise TypeError(
                "Stream() takes None, a Stream, an object with __cuda_stream__, a CuPy or "
                "Numba stream or an int handle, "
                f"not {type(obj).__name__}"
            )

    @classmethod
    def _from_handle(cls, handle, owner=None):
        s = cls.__new__(cls)
        s._handle = int(handle)
        s._owner = owner
        return s

    @property
    def handle(self):
        """The stream handle as an int (not in RMM 25.02, whose handle is Cython-only)."""
        return self._handle

    def __cuda_stream__(self):
        """The CUDA stream protocol: ``(0, handle)`` (version 0; RMM 26.06)."""
        return (0, self._handle)

    def synchronize(self):
        """Wait until all work queued on the stream has completed."""
        _ffi.stream_synchronize(self._handle)

    def query(self):
        """Whether all work queued on the stream has completed (not in RMM 25.02)."""
        return _ffi.stream_query(self._handle)

    def is_default(self):
        """Whether this is the default (legacy) stream."""
        return self._handle in (0, 1)

    def __int__(self):
        return self._handle

    def __eq__(self, other):
        return isinstance(other, Stream) and other._handle == self._handle

    def __hash__(self):
        return hash(self._handle)

    def __repr__(self):
        return f"<rmm.pylibrmm.stream.Stream handle={self._handle:#x}>"


DEFAULT_STREAM = Stream._from_handle(0)
LEGACY_DEFAULT_STREAM = Stream._from_handle(1)
PER_THREAD_DEFAULT_STREAM = Stream._from_handle(2)


def as_stream(stream, name="stream"):
    """``stream`` checked to be a ``Stream``.

    None is refused as RMM 26.06 refuses it: a silent default stream would hide a caller's
    missing stream (leave the argument out for the default stream)."""
    if stream is None:
        raise TypeError(
            f"{name} argument cannot be None. Please provide a valid Stream instance "
            "(or leave it out for the default stream)."
        )
    if not isinstance(stream, Stream):
        raise TypeError(f"{name} must be an rmm Stream, not {type(stream).__name__}")
    return stream


__all__ = [
    "CudaStreamFlags",
    "Stream",
    "DEFAULT_STREAM",
    "LEGACY_DEFAULT_STREAM",
    "PER_THREAD_DEFAULT_STREAM",
]

_generation.gate(globals(), {"CudaStreamFlags": ("26.06", None)})
