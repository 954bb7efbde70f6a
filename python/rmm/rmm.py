"""``reinitialize`` and its hooks (RMM's ``rmm.rmm``)."""

import inspect

from rmm import mr
from rmm._exceptions import RMMError  # noqa: F401

_reinitialize_hooks = []


def reinitialize(*args, **kwargs):
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
    # The options are rmm.mr._initialize's, with its defaults: checked before a hook runs.
    try:
        options = _OPTIONS.bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(f"reinitialize() {e}") from None
    options.apply_defaults()
    for func, hook_args, hook_kwargs in reversed(_reinitialize_hooks):
        func(*hook_args, **hook_kwargs)
    mr._initialize(**options.arguments)


# reinitialize's parameters, as help() and inspect show them: rmm.mr._initialize's.
reinitialize.__signature__ = _OPTIONS = inspect.signature(mr._initialize)


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
