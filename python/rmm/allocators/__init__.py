"""Allocators that route third-party libraries' device memory through RMM:
``rmm.allocators.cupy``, ``rmm.allocators.numba`` and ``rmm.allocators.torch``. Each module
imports without its library (its allocator object is then None)."""
