"""RMM's ``rmm.pylibrmm.cuda_stream``: ``CudaStream``, a new stream owned by the object.
RMM 26.06 removed it: absent for the API generations from 26.06."""

import weakref

from rmm import _ffi, _generation

_generation.require_module(__name__, until="26.06")


class CudaStream:
    """A new GPU stream, destroyed when the object goes (RMM's RAII ``CudaStream``)."""

    __slots__ = ("_handle", "_finalizer", "__weakref__")

    def __init__(self):
        self._handle = _ffi.stream_create(0)
        self._finalizer = weakref.finalize(self, _ffi.stream_destroy, self._handle)

    def __int__(self):
        return self._handle

    def __repr__(self):
        return f"<rmm.pylibrmm.cuda_stream.CudaStream {self._handle:#x}>"
