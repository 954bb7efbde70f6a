"""``CudaStreamPool``: a fixed set of streams handed out in turn (RMM 26.06; absent for
the API generations before it)."""

from rmm import _ffi, _generation

_generation.require_module(__name__, since="26.06")

from rmm.pylibrmm.helper import check_size  # noqa: E402
from rmm.pylibrmm.stream import CudaStreamFlags, Stream, _check_flags  # noqa: E402

__all__ = ["CudaStreamPool"]


class CudaStreamPool:
    """A pool of ``pool_size`` streams created with ``flags``, owned by the pool.

    ``get_stream()`` gives the next stream in turn, ``get_stream(i)`` the stream at
    ``i % pool_size``; either is a non-owning ``Stream`` that keeps the pool alive.
    """

    def __init__(self, pool_size=16, flags=CudaStreamFlags.SYNC_DEFAULT):
        pool_size = check_size(pool_size, "pool_size")
        if pool_size == 0:
            # rmm::cuda_stream_pool refuses an empty pool: get_stream would have nothing.
            raise ValueError("pool_size must be at least 1 (got 0)")
        flags = _check_flags(flags)
        self._streams = []
        self._next = 0
        for _ in range(pool_size):
            self._streams.append(_ffi.stream_create(int(flags)))

    def __del__(self):
        streams, self._streams = getattr(self, "_streams", []), []
        for handle in streams:
            try:
                _ffi.stream_destroy(handle)
            except Exception:
                pass  # at interpreter exit the runtime may already be gone

    def get_stream(self, stream_id=None):
        """The stream ``stream_id`` (modulo the pool size), or the next one in turn."""
        if stream_id is None:
            index = self._next
            self._next = (self._next + 1) % len(self._streams)
        else:
            index = check_size(stream_id, "stream_id") % len(self._streams)
        return Stream._from_handle(self._streams[index], owner=self)

    def get_pool_size(self):
        """The number of streams in the pool."""
        return len(self._streams)
