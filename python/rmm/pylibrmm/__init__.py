"""The parts of RMM's ``pylibrmm``: streams, memory resources, device buffers, logger."""

from rmm.pylibrmm.device_buffer import DeviceBuffer
from rmm.pylibrmm.stream import DEFAULT_STREAM, PER_THREAD_DEFAULT_STREAM, Stream

__all__ = ["DeviceBuffer", "Stream", "DEFAULT_STREAM", "PER_THREAD_DEFAULT_STREAM"]
