"""Experimental memory resources (RMM 26.06's ``rmm.pylibrmm.memory_resource.experimental``;
absent for the API generations before 26.06)."""

from rmm import _generation

_generation.require_module(__name__, since="26.06")

from rmm.pylibrmm.memory_resource._memory_resource import (  # noqa: E402
    CudaAsyncManagedMemoryResource,
)

__all__ = ["CudaAsyncManagedMemoryResource"]
