"""Memory resources: Python objects over librmm.so resource handles.

A package as in RMM 26.06 (``_memory_resource`` holds the classes and the registry,
``experimental`` the experimental resources). The names follow the API generation in force
(``rmm.api_version()``): ``_GATED`` lists the ones some generations lack.
"""

from rmm import _generation
from rmm.pylibrmm.memory_resource import _memory_resource
from rmm.pylibrmm.memory_resource._memory_resource import (
    ArenaMemoryResource,
    BinningMemoryResource,
    CallbackMemoryResource,
    CudaAsyncMemoryResource,
    CudaAsyncViewMemoryResource,
    CudaMemoryResource,
    DeviceMemoryResource,
    FailureCallbackResourceAdaptor,
    FixedSizeMemoryResource,
    LimitingResourceAdaptor,
    LoggingResourceAdaptor,
    ManagedMemoryResource,
    PinnedHostMemoryResource,
    PoolMemoryResource,
    PrefetchResourceAdaptor,
    SamHeadroomMemoryResource,
    StatisticsResourceAdaptor,
    SystemMemoryResource,
    TrackingResourceAdaptor,
    UpstreamResourceAdaptor,
    VmmPoolMemoryResource,
    _flush_logs,
    _initialize,
    available_device_memory,
    disable_logging,
    enable_logging,
    get_current_device_resource,
    get_current_device_resource_type,
    get_log_filenames,
    get_per_device_resource,
    get_per_device_resource_type,
    is_initialized,
    set_current_device_resource,
    set_per_device_resource,
)

__all__ = [
    "ArenaMemoryResource",
    "BinningMemoryResource",
    "CallbackMemoryResource",
    "CudaAsyncMemoryResource",
    "CudaAsyncViewMemoryResource",
    "CudaMemoryResource",
    "DeviceMemoryResource",
    "FailureCallbackResourceAdaptor",
    "FixedSizeMemoryResource",
    "LimitingResourceAdaptor",
    "LoggingResourceAdaptor",
    "ManagedMemoryResource",
    "PinnedHostMemoryResource",
    "PoolMemoryResource",
    "PrefetchResourceAdaptor",
    "SamHeadroomMemoryResource",
    "StatisticsResourceAdaptor",
    "SystemMemoryResource",
    "TrackingResourceAdaptor",
    "UpstreamResourceAdaptor",
    "VmmPoolMemoryResource",
    "available_device_memory",
    "disable_logging",
    "enable_logging",
    "experimental",
    "get_current_device_resource",
    "get_current_device_resource_type",
    "get_log_filenames",
    "get_per_device_resource",
    "get_per_device_resource_type",
    "is_initialized",
    "set_current_device_resource",
    "set_per_device_resource",
]


#: Names only some API generations have: name -> (the RMM release that added it, the one
#: that removed it), None for no bound. ``rmm.mr`` has the same.
_GATED = {
    "CudaAsyncViewMemoryResource": ("25.10", None),
    "PinnedHostMemoryResource": ("26.06", None),
    "experimental": ("26.06", None),
    "get_current_device_resource_type": (None, "26.08"),
    "get_per_device_resource_type": (None, "26.08"),
}


def __getattr__(name):
    # The module's private helpers (registry state, _free_vouched, ...) stay reachable
    # under the module path that code written for RMM 25.02 used.
    try:
        return getattr(_memory_resource, name)
    except AttributeError:
        raise AttributeError(
            f"module 'rmm.pylibrmm.memory_resource' has no attribute {name!r}"
        ) from None


_gate = _generation.gate(globals(), _GATED, lazy={"experimental": ""})
