"""The parts of RMM's ``pylibrmm``: streams, stream pools, memory resources, device
buffers, logger."""

from rmm.pylibrmm import memory_resource
from rmm.pylibrmm.cuda_stream_pool import CudaStreamPool
from rmm.pylibrmm.device_buffer import DeviceBuffer
from rmm.pylibrmm.stream import (
    DEFAULT_STREAM,
    LEGACY_DEFAULT_STREAM,
    PER_THREAD_DEFAULT_STREAM,
    CudaStreamFlags,
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
