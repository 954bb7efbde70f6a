"""Host stand-in of ``cuda.bindings.driver``: the pool handle type only."""

from cuda.bindings.runtime import cudaMemPool_t as CUmemoryPool

__all__ = ["CUmemoryPool"]
