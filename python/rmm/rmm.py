"""``reinitialize`` and its hooks (RMM's ``rmm.rmm``)."""

from rmm import mr
from rmm._exceptions import RMMError  # noqa: F401

_reinitialize_hooks = []


def reinitialize(
    pool_allocator=False,
    managed_memory=False,
    initial_pool_size=None,
    maximum_pool_size=None,
    devices=0,
    logging=False,
    log_file_name=None,
    vmm_pool_allocator=False,
):
    """Replace the memory resource of each of ``devices`` (an int or a list of ints).

    With ``pool_allocator``, a ``PoolMemoryResource`` of ``initial_pool_size`` (default:
    half the free memory) growing to ``maximum_pool_size`` (default: unbounded) is used;
    sizes are ints or strings such as ``"1GiB"``. ``managed_memory`` takes memory from
    ``ManagedMemoryResource`` instead of ``CudaMemoryResource``. ``logging`` wraps the
    resource in a ``LoggingResourceAdaptor`` writing to ``log_file_name`` (or
    ``$RMM_LOG_FILE``) with ``.dev<N>`` added. ``vmm_pool_allocator`` (not in RMM) uses a
    ``VmmPoolMemoryResource`` of the same sizes instead (default: grow on demand up to the
    reservation); it excludes ``pool_allocator`` and ``managed_memory``. Registered hooks
    run first, newest first.
    Memory from the previous resources must not be used afterwards.
    """
    for func, args, kwargs in reversed(_reinitialize_hooks):
        func(*args, **kwargs)
    mr._initialize(
        pool_allocator=pool_allocator,
        managed_memory=managed_memory,
        initial_pool_size=initial_pool_size,
        maximum_pool_size=maximum_pool_size,
        devices=devices,
        logging=logging,
        log_file_name=log_file_name,
        vmm_pool_allocator=vmm_pool_allocator,
    )


def is_initialized():
    """Whether RMM is initialized (always True: librmm.so has an initial resource)."""
    return mr.is_initialized()


def register_reinitialize_hook(func, *args, **kwargs):
    """Call ``func(*args, **kwargs)`` before each ``reinitialize()`` (hooks run newest
    first); returns ``func``."""
    _reinitialize_hooks.append((func, args, kwargs))
    return func


def unregister_reinitialize_hook(func):
    """Remove every registration of ``func``."""
    global _reinitialize_hooks
    _reinitialize_hooks = [h for h in _reinitialize_hooks if h[0] is not func]
