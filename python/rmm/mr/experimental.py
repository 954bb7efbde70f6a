"""Experimental memory resources (RMM 26.06's ``rmm.mr.experimental``): they may change or
go in a later release."""

from rmm.pylibrmm.memory_resource.experimental import CudaAsyncManagedMemoryResource

__all__ = ["CudaAsyncManagedMemoryResource"]
