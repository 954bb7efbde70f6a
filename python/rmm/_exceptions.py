"""Exceptions raised for failures reported by librmm.so.

Every failure of a C call becomes an ``RMMError`` (constructed, as in RMM, with
``(errcode, msg)``; ``errcode`` is the C ABI's ``rmm_status_t`` value). Some also derive
from the built-in exception that Python code already catches for that kind of failure:
an out-of-memory is a ``MemoryError``, an invalid argument a ``ValueError``. Every failure
that RMM's Cython modules raise as a ``RuntimeError`` (C++ logic and runtime errors) is one
here too, so code written for RMM catches the same failures.

An exception raised by a Python callback reaches the caller as RMM's wrappers pass it on: a
``MemoryError`` or ``RuntimeError`` as it is, any other as a ``CallbackError`` (a
``RuntimeError``) with its message, chained to it.
"""


class RMMError(Exception):
    """A failure reported by librmm.so; ``errcode`` is its ``rmm_status_t`` value."""

    def __init__(self, errcode, msg):
        self.errcode = errcode
        self.msg = msg
        super().__init__(msg)


class InvalidArgumentError(RMMError, ValueError, RuntimeError):
    """librmm.so rejected an argument (RMM_STATUS_INVALID_ARGUMENT)."""


class BadAllocError(RMMError, MemoryError):
    """An allocation failed for a reason other than lack of memory (RMM's bad_alloc)."""


class OutOfMemoryError(BadAllocError):
    """Not enough memory for the request (RMM's out_of_memory).

    The message keeps what librmm.so reported: the size asked for and what the resource
    (for a pool: its size and free bytes) held.
    """


class CUDAError(RMMError, RuntimeError):
    """A GPU runtime call failed (RMM's cuda_error)."""


class NoRuntimeError(RMMError, RuntimeError):
    """No usable GPU runtime or device (set RMM_RUNTIME=host for the host emulation)."""


class UnsupportedError(RMMError, NotImplementedError):
    """The runtime or device lacks a feature that the call needs."""


class CallbackError(RMMError, RuntimeError):
    """A user callback reported a failure."""


__all__ = [
    "RMMError",
    "InvalidArgumentError",
    "BadAllocError",
    "OutOfMemoryError",
    "CUDAError",
    "NoRuntimeError",
    "UnsupportedError",
    "CallbackError",
]
