"""The parts of RMM's ``pylibrmm``: streams, stream pools, memory resources, device
buffers, logger. ``CudaStreamPool`` and ``CudaStreamFlags`` are RMM 26.06's (absent for the
API generations before it)."""

from rmm import _generation
from rmm.pylibrmm import memory_resource
from rmm.pylibrmm.device_buffer import DeviceBuffer
from rmm.pylibrmm.stream import (
    DEFAULT_STREAM,
    LEGACY_DEFAULT_STREAM,
    PER_THREAD_DEFAULT_STREAM,
    Stream,
)

__all__ = [
    "CudaStreamFlags",
    "CudaStreamPool",
    "DEFAULT_STREAM",
    "DeviceBuffer",
    "LEGACY_DEFAULT_STREAM",
    "PER_THREAD_DEFAULT_STREAM",
    "Stream",
    "memory_resource",
]

_generation.gate(
    globals(),
    {
        "CudaStreamFlags": ("26.06", None),
        "CudaStreamPool": ("26.06", None),
        "cuda_stream_pool": ("26.06", None),
        "cuda_stream": (None, "26.06"),
    },
    lazy={
        "CudaStreamFlags": "rmm.pylibrmm.stream",
        "CudaStreamPool": "rmm.pylibrmm.cuda_stream_pool",
        "cuda_stream_pool": "",
    },
)
