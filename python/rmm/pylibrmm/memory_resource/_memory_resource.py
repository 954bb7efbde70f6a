"""Memory resources: Python objects over librmm.so resource handles.

Each object holds one reference to its librmm.so resource (``_handle``); adaptors and
sub-allocators also keep their upstream Python object. The per-device registry lives in
librmm.so (shared with C and C++ code in the process); this module keeps the Python
objects it set so that ``get_*`` gives back the same object while that resource is still
the registry's entry, and wraps resources set from C or C++ in the class of their kind.
"""

import itertools
import os
import threading
import warnings
import weakref

from rmm import _ffi
from rmm import _generation as _gen
# `import rmm` makes `rmm._cuda.gpu` reachable as an attribute, as RMM's does (its tests use it).
from rmm._cuda import gpu as _gpu  # noqa: F401
from rmm._exceptions import InvalidArgumentError, UnsupportedError
from rmm.pylibrmm.helper import check_pointer, check_size, parse_size
from rmm.pylibrmm.stream import DEFAULT_STREAM, Stream, as_stream
from rmm.statistics import Statistics

# device -> the Python object set for it from Python (kept alive, as RMM does)
_per_device_mrs = {}


def _register(obj, handle):
    obj._handle = handle
    return obj


class DeviceMemoryResource:
    """Base class of all memory resources: ``allocate`` and ``deallocate`` memory."""

    _handle = None
    # Whether a CallbackMemoryResource is in this resource's upstream chain (see
    # _free_vouched): set by CallbackMemoryResource and passed on by adaptors.
    _has_callbacks = False

    def __init__(self, *args, **kwargs):
        if type(self) is DeviceMemoryResource:
            raise TypeError("DeviceMemoryResource is abstract: use one of its subclasses")

    def _h(self):
        h = self._handle
        if h is None:
            raise ValueError(f"{type(self).__name__} was not initialized")
        return h

    def allocate(self, nbytes, stream=DEFAULT_STREAM):
        """Allocate ``nbytes`` bytes on ``stream``; returns the address as an int."""
        nbytes = check_size(nbytes, "nbytes")
        stream = as_stream(stream)
        _gen.allocated = True
        return _ffi.allocate(self._h(), nbytes, stream._handle)

    def deallocate(self, ptr, nbytes, stream=DEFAULT_STREAM):
        """Free ``ptr`` of ``nbytes`` bytes (as allocated) on ``stream``."""
        ptr = check_pointer(ptr, "ptr")
        nbytes = check_size(nbytes, "nbytes")
        stream = as_stream(stream)
        _ffi.deallocate(self._h(), ptr, nbytes, stream._handle)

    def is_equal(self, other):
        """Whether memory of one of the two resources may be freed by the other (not in
        RMM 25.02's Python API; C++'s ``is_equal``)."""
        if not isinstance(other, DeviceMemoryResource):
            return False
        return self._h().is_equal(other._h())

    def __repr__(self):
        h = self._handle
        where = f" at {h.address:#x}" if h is not None and not h.released else ""
        return f"<{type(self).__module__}.{type(self).__qualname__}{where}>"

    def __reduce__(self):
        raise TypeError(f"{type(self).__name__} objects cannot be pickled")

    @classmethod
    def _wrap(cls, handle):
        obj = cls.__new__(cls)
        return _register(obj, handle)


class UpstreamResourceAdaptor(DeviceMemoryResource):
    """Base class of the resources built over an upstream resource (kept alive)."""

    def __init__(self, upstream_mr, *args, **kwargs):
        if type(self) is UpstreamResourceAdaptor:
            raise TypeError("UpstreamResourceAdaptor is abstract: use one of its subclasses")
        self.upstream_mr = _check_mr(upstream_mr, "upstream_mr")
        if upstream_mr._has_callbacks:
            self._has_callbacks = True

    def get_upstream(self):
        """The upstream resource."""
        return self.upstream_mr

    @classmethod
    def _wrap(cls, handle):
        obj = super()._wrap(handle)
        try:
            obj.upstream_mr = _from_handle(handle.upstream())
        except Exception:
            obj.upstream_mr = None
        return obj


def _check_mr(mr, name="mr"):
    if not isinstance(mr, DeviceMemoryResource):
        raise TypeError(f"{name} must be a DeviceMemoryResource, not {type(mr).__name__}")
    h = mr._h()
    if h.released:
        raise ValueError(f"{name} has been released")
    return mr


class CudaMemoryResource(DeviceMemoryResource):
    """Device memory from ``cudaMalloc`` / ``hipMalloc`` (no pooling)."""

    def __init__(self):
        _register(self, _ffi.cuda_create())


class ManagedMemoryResource(DeviceMemoryResource):
    """Managed (unified) memory from ``cudaMallocManaged``."""

    def __init__(self):
        _register(self, _ffi.managed_create())


class SystemMemoryResource(DeviceMemoryResource):
    """Host ``malloc`` memory, for devices that can access pageable memory (HMM/ATS)."""

    def __init__(self):
        _register(self, _ffi.system_create())


class SamHeadroomMemoryResource(DeviceMemoryResource):
    """System memory kept on the device while ``headroom`` bytes stay free there."""

    def __init__(self, headroom):
        _register(self, _ffi.sam_headroom_create(parse_size(headroom, "headroom")))


# cudaMemAllocationHandleType bits, as rmm_async_create takes them
_HANDLE_POSIX_FD = 1
_HANDLE_FABRIC = 8


class CudaAsyncMemoryResource(DeviceMemoryResource):
    """Stream-ordered allocation (``cudaMallocAsync``) from a pool of its own.

    ``initial_pool_size`` and ``release_threshold`` are bytes (ints or strings such as
    ``"1GiB"``); by default half of the free device memory is reserved at construction and
    the release threshold is the device's total memory. ``enable_ipc`` makes the pool
    exportable as POSIX file descriptors, ``enable_fabric`` (RMM 25.10) as fabric handles;
    a handle type the device or runtime cannot export raises a ``RuntimeError`` ending in
    "Requested IPC memory handle type not supported", as RMM's.
    """

    def __init__(
        self,
        initial_pool_size=None,
        release_threshold=None,
        enable_ipc=False,
        enable_fabric=False,
    ):
        initial = None if initial_pool_size is None else parse_size(initial_pool_size)
        release = None if release_threshold is None else parse_size(release_threshold)
        handle_type = (_HANDLE_POSIX_FD if enable_ipc else 0) | (
            _HANDLE_FABRIC if enable_fabric else 0
        )
        try:
            handle = _ffi.async_create(initial, release, handle_type)
        except UnsupportedError as e:
            if not handle_type:
                raise
            # RMM's words end the message: callers (and RMM's own tests) match on them.
            err = UnsupportedError(
                e.errcode,
                f"{e.msg.rstrip('.')}; Requested IPC memory handle type not supported",
            )
            err.runtime_code = getattr(e, "runtime_code", 0)
            raise err from e
        _register(self, handle)

    def pool_handle(self):
        """The address of the pool (a ``cudaMemPool_t``) this resource allocates from."""
        return _ffi.async_pool_handle(self._h())


def _pool_address(pool_handle):
    """The address in a pool handle: cuda-bindings' ``cudaMemPool_t`` / ``CUmemoryPool``
    (``int()`` gives it), or a plain int."""
    if isinstance(pool_handle, bool) or pool_handle is None:
        raise ValueError(
            "pool_handle must be a cudaMemPool_t or CUmemoryPool (or its address as an int), "
            f"not {pool_handle!r}"
        )
    try:
        address = int(pool_handle)
    except (TypeError, ValueError):
        raise ValueError(
            "pool_handle must be a cudaMemPool_t or CUmemoryPool (or its address as an int), "
            f"not {type(pool_handle).__name__}"
        ) from None
    if address <= 0 or address >= 1 << 64:
        raise ValueError(
            f"pool_handle must be a non-null pool address, got {address:#x}: pass a pool "
            "from cudaDeviceGetDefaultMemPool or cudaMemPoolCreate"
        )
    return address


class CudaAsyncViewMemoryResource(DeviceMemoryResource):
    """Stream-ordered allocation from an existing pool (RMM 25.10).

    ``pool_handle`` is a ``cudaMemPool_t`` / ``CUmemoryPool`` (or its address), such as
    the device's default pool; the resource does not own it, and the pool must outlive it.
    """

    def __init__(self, pool_handle):
        _register(self, _ffi.async_view_create(_pool_address(pool_handle)))

    def pool_handle(self):
        """The address of the viewed pool."""
        return _ffi.async_pool_handle(self._h())


class PinnedHostMemoryResource(DeviceMemoryResource):
    """Pinned (page-locked) host memory (``cudaHostAlloc``/``cudaFreeHost``; RMM 26.06),
    reachable from the host and the device."""

    def __init__(self):
        _register(self, _ffi.pinned_host_create())


class CudaAsyncManagedMemoryResource(DeviceMemoryResource):
    """Stream-ordered managed memory (``cudaMallocFromPoolAsync`` from the device's default
    managed pool), reachable from the host and the device. Needs a runtime with managed
    pools (CUDA 13 or later and concurrent managed access); elsewhere construction raises
    a ``NotImplementedError`` (a ``RuntimeError``) saying so."""

    def __init__(self):
        _register(self, _ffi.async_managed_create())

    def pool_handle(self):
        """The address of the managed pool this resource allocates from."""
        return _ffi.async_pool_handle(self._h())


# RMM 26.06's module path (rmm.pylibrmm.memory_resource.experimental, which re-exports it).
CudaAsyncManagedMemoryResource.__module__ = "rmm.pylibrmm.memory_resource.experimental"


class PoolMemoryResource(UpstreamResourceAdaptor):
    """A coalescing pool over ``upstream_mr``.

    ``initial_pool_size`` defaults to half of the device's free memory; the pool grows on
    demand up to ``maximum_pool_size`` (default: no maximum). Sizes are ints or strings
    such as ``"1GiB"``, multiples of 256.
    """

    def __init__(self, upstream_mr, initial_pool_size=None, maximum_pool_size=None):
        super().__init__(upstream_mr)
        if initial_pool_size is None:
            initial = _ffi.percent_of_free_device_memory(50)
        else:
            initial = parse_size(initial_pool_size, "initial_pool_size")
        maximum = 0 if maximum_pool_size is None else parse_size(maximum_pool_size, "maximum_pool_size")
        _register(self, _ffi.pool_create(upstream_mr._h(), initial, maximum))

    def pool_size(self):
        """Bytes the pool has taken from its upstream."""
        return _ffi.pool_stats(self._h())["pool_size"]

    def pool_stats(self):
        """The pool's statistics (beyond RMM): sizes, free blocks, fragmentation."""
        return _ffi.pool_stats(self._h())

    def release(self):
        """Give entirely free upstream blocks back (beyond RMM); returns the bytes freed."""
        return _ffi.pool_release(self._h())


def _positive_size(value, name, default_meaning):
    """A size argument of ``VmmPoolMemoryResource``: None -> 0 (librmm.so's default),
    otherwise a positive size (0 would silently mean the default in the C ABI)."""
    if value is None:
        return 0
    size = parse_size(value, name)
    if size == 0:
        raise ValueError(f"{name} must be positive, got 0 (pass None for {default_meaning})")
    return size


def _peer_devices(peer_devices):
    """``peer_devices`` (an int or an iterable of ints) as a list of device ids."""
    if peer_devices is None:
        return []
    if isinstance(peer_devices, int) and not isinstance(peer_devices, bool):
        peer_devices = [peer_devices]
    elif isinstance(peer_devices, (str, bytes, bytearray)):
        raise TypeError(
            f"peer_devices must be an iterable of device ids, not {type(peer_devices).__name__}"
        )
    try:
        devices = list(peer_devices)
    except TypeError:
        raise TypeError(
            f"peer_devices must be an iterable of device ids, not {type(peer_devices).__name__}"
        ) from None
    for d in devices:
        if isinstance(d, bool) or not hasattr(d, "__index__"):
            raise TypeError(f"peer_devices must hold ints, not {type(d).__name__}")
    devices = [d.__index__() for d in devices]
    for d in devices:
        if not -(1 << 31) <= d < 1 << 31:
            raise ValueError(f"peer device {d} does not exist")
    return devices


class VmmPoolMemoryResource(DeviceMemoryResource):
    """A coalescing pool on the current device's virtual memory (not in RMM).

    One range of address space (``reserved_size`` bytes; default: twice the device's
    memory, or ``maximum_pool_size`` if larger) is reserved up front, and physical memory is
    mapped into it ``granularity`` bytes at a time (default: the device's recommended
    granularity, 2 MiB on current NVIDIA GPUs; a multiple of the device's minimum). The pool
    therefore grows in place: memory mapped later sits right after what the pool already
    has, so free space merges across growths and a large request fits wherever enough free
    bytes touch. ``release()`` unmaps every whole free granule, even between live blocks.

    ``initial_pool_size`` is mapped at construction (default: nothing; the pool grows on
    demand) and the pool never maps more than ``maximum_pool_size`` (default: the
    reservation). With ``release_threshold``, a free that leaves more than that many bytes
    free unmaps free granules whose streams are idle (default: keep everything until
    ``release()``). ``peer_devices`` (device ids) also get read and write access to the
    memory. Sizes are ints or strings such as ``"1GiB"``.

    Raises ``NotImplementedError`` (an ``rmm.RMMError``) where the device or runtime has no
    virtual memory management, ``ValueError`` for a granularity that is not a multiple of
    the device's, sizes that do not fit the reservation or a peer device that does not
    exist, and ``MemoryError`` when an allocation would pass the maximum.
    """

    def __init__(
        self,
        initial_pool_size=None,
        maximum_pool_size=None,
        *,
        reserved_size=None,
        granularity=None,
        release_threshold=None,
        peer_devices=(),
    ):
        initial = (
            0 if initial_pool_size is None else parse_size(initial_pool_size, "initial_pool_size")
        )
        maximum = _positive_size(
            maximum_pool_size, "maximum_pool_size", "no maximum but the reservation"
        )
        reserved = _positive_size(reserved_size, "reserved_size", "the default reservation")
        granule = _positive_size(
            granularity, "granularity", "the device's recommended granularity"
        )
        threshold = (
            None
            if release_threshold is None
            else parse_size(release_threshold, "release_threshold")
        )
        peers = _peer_devices(peer_devices)
        _register(
            self,
            _ffi.vmm_pool_create(initial, maximum, reserved, granule, threshold, peers),
        )

    def pool_stats(self):
        """The pool's statistics: ``pool_size``, ``maximum_pool_size``, ``reserved_size``,
        ``granularity``, ``bytes_free``, ``free_block_count``, ``largest_free_block`` and
        ``fragmentation``."""
        return _ffi.vmm_pool_stats(self._h())

    def pool_size(self):
        """Bytes mapped now."""
        return self.pool_stats()["pool_size"]

    def maximum_pool_size(self):
        """The most bytes the pool maps at once (the reservation when no maximum was
        given)."""
        stats = self.pool_stats()
        # Without a maximum, librmm.so reports the reservation, which bounds the pool then.
        return stats["maximum_pool_size"]

    def reserved_size(self):
        """Bytes of address space reserved."""
        return self.pool_stats()["reserved_size"]

    def granularity(self):
        """Bytes per mapping: the unit of growth and of release."""
        return self.pool_stats()["granularity"]

    def bytes_free(self):
        """Bytes mapped and not allocated (all streams)."""
        return self.pool_stats()["bytes_free"]

    def largest_free_block(self):
        """The size of the largest free block."""
        return self.pool_stats()["largest_free_block"]

    def fragmentation(self):
        """``1 - largest_free_block / bytes_free`` (0.0 when nothing is free)."""
        return self.pool_stats()["fragmentation"]

    def release(self):
        """Unmap every whole free granule, wherever it lies (blocks around it stay live),
        once the streams that freed it are done; returns the bytes unmapped."""
        return _ffi.vmm_pool_release(self._h())


class ArenaMemoryResource(UpstreamResourceAdaptor):
    """An arena allocator over ``upstream_mr`` for many threads and streams.

    ``arena_size`` (default: half the free device memory) is taken in one upstream
    allocation.
    """

    def __init__(self, upstream_mr, arena_size=None, dump_log_on_failure=False):
        super().__init__(upstream_mr)
        size = 0 if arena_size is None else parse_size(arena_size, "arena_size")
        _register(self, _ffi.arena_create(upstream_mr._h(), size, bool(dump_log_on_failure)))


class FixedSizeMemoryResource(UpstreamResourceAdaptor):
    """Blocks of ``block_size`` bytes, taken from ``upstream_mr`` ``blocks_to_preallocate``
    at a time; larger requests fail."""

    def __init__(self, upstream_mr, block_size=1 << 20, blocks_to_preallocate=128):
        super().__init__(upstream_mr)
        block_size = check_size(block_size, "block_size")
        blocks = check_size(blocks_to_preallocate, "blocks_to_preallocate")
        _register(self, _ffi.fixed_size_create(upstream_mr._h(), block_size, blocks))

    def get_block_size(self):
        """The block size in bytes (not in RMM 25.02's Python API)."""
        return _ffi.fixed_size_block_size(self._h())


class BinningMemoryResource(UpstreamResourceAdaptor):
    """Requests served by size bins (fixed-size resources, or any resource given to
    ``add_bin``); requests larger than every bin go to ``upstream_mr``.

    With both exponents given, bins of 2**min_size_exponent .. 2**max_size_exponent bytes
    are made up front.
    """

    def __init__(self, upstream_mr, min_size_exponent=-1, max_size_exponent=-1):
        super().__init__(upstream_mr)
        for name, v in (("min_size_exponent", min_size_exponent), ("max_size_exponent", max_size_exponent)):
            if isinstance(v, bool) or not isinstance(v, int):
                raise TypeError(f"{name} must be an int, not {type(v).__name__}")
            if not -128 <= v <= 127:
                raise OverflowError(f"{name} out of range: {v}")
        self._bin_mrs = []
        _register(self, _ffi.binning_create(upstream_mr._h(), min_size_exponent, max_size_exponent))

    def add_bin(self, allocation_size, bin_resource=None):
        """Add a bin for requests up to ``allocation_size`` bytes, served by
        ``bin_resource`` (kept alive) or by a new fixed-size resource."""
        allocation_size = check_size(allocation_size, "allocation_size")
        if bin_resource is None:
            _ffi.binning_add_bin(self._h(), allocation_size, None)
        else:
            _check_mr(bin_resource, "bin_resource")
            _ffi.binning_add_bin(self._h(), allocation_size, bin_resource._h())
            self._bin_mrs.append(bin_resource)
            if bin_resource._has_callbacks:
                self._has_callbacks = True

    @property
    def bin_mrs(self):
        """The resources given to ``add_bin``."""
        return list(self._bin_mrs)

    @classmethod
    def _wrap(cls, handle):
        obj = super()._wrap(handle)
        obj._bin_mrs = []
        return obj


# ---- Python callbacks that the cycle collector can see through ----------------------------
#
# librmm.so keeps the callables it is given in Rust, where Python's cycle collector cannot
# see them: a callback referring back to its resource (a bound method of an object that
# holds the resource, say) would make a cycle that is never collected. So librmm.so gets
# trampolines holding only a weak reference to the Python resource object, which holds the
# user's functions as ordinary attributes (as RMM's does).
#
# The collector clears weak references before it breaks a garbage cycle, so memory that a
# DeviceBuffer of the same cycle still holds could no longer reach its deallocate function.
# DeviceBuffer.__del__ (run, for cyclic garbage, while every object is still intact) frees
# its memory through _free_vouched, which names the callback resources of the buffer's
# resource chain to their trampolines for the duration of the free.

_callback_keys = itertools.count(1)
_vouched = threading.local()  # .resources: {key: CallbackMemoryResource} during _free_vouched


def _callback_resources(mr):
    """The CallbackMemoryResources of ``mr``'s upstream chain (bins included)."""
    found, stack, seen = [], [mr], set()
    while stack:
        m = stack.pop()
        if m is None or id(m) in seen:
            continue
        seen.add(id(m))
        if getattr(m, "_callback_key", None) is not None:
            found.append(m)
        stack.append(getattr(m, "upstream_mr", None))
        stack.extend(getattr(m, "_bin_mrs", ()))
    return found


def _free_vouched(allocation, mr):
    """``allocation.free()``, with the callback resources of ``mr``'s chain reachable by
    their trampolines on this thread even if their weak references are already cleared."""
    saved = getattr(_vouched, "resources", None)
    resources = dict(saved) if saved else {}
    resources.update((r._callback_key, r) for r in _callback_resources(mr))
    _vouched.resources = resources
    try:
        allocation.free()
    finally:
        _vouched.resources = saved


def _callback_trampolines(mr):
    """(allocate, deallocate) for ``_ffi.callback_create``, reaching ``mr`` weakly."""
    ref = weakref.ref(mr)
    key = mr._callback_key

    def resource():
        r = ref()
        if r is None:
            r = (getattr(_vouched, "resources", None) or {}).get(key)
            if r is None:
                raise ReferenceError(
                    "the CallbackMemoryResource of this resource was garbage collected: keep "
                    "it alive while C or C++ code uses the resource"
                )
        return r

    def allocate(size, stream):
        return resource()._allocate_func(size, Stream._from_handle(stream))

    def deallocate(ptr, size, stream):
        resource()._deallocate_func(ptr, size, Stream._from_handle(stream))

    return allocate, deallocate


class CallbackMemoryResource(DeviceMemoryResource):
    """A resource whose operations are Python functions:
    ``allocate_func(size, stream) -> int`` and ``deallocate_func(ptr, size, stream)``.

    An exception raised by ``allocate_func`` reaches the code that allocated; one raised by
    ``deallocate_func`` is reported as unraisable. Reference cycles through the functions
    (bound methods of an object that holds this resource) are collected. Unlike RMM, if C or
    C++ code keeps using the resource after this object is collected, the calls fail with
    ``ReferenceError`` instead of calling freed Python objects.
    """

    _callback_key = None
    _has_callbacks = True

    def __init__(self, allocate_func, deallocate_func):
        if not callable(allocate_func) or not callable(deallocate_func):
            raise TypeError("allocate_func and deallocate_func must be callable")
        self._allocate_func = allocate_func
        self._deallocate_func = deallocate_func
        self._callback_key = next(_callback_keys)
        _register(self, _ffi.callback_create(*_callback_trampolines(self)))

    @classmethod
    def _wrap(cls, handle):
        # made by C or C++ code: its callbacks are not Python's
        obj = super()._wrap(handle)
        obj._has_callbacks = False
        return obj


def _append_id(filename, device):
    name, ext = os.path.splitext(filename)
    return f"{name}.dev{device}{ext}"


class LimitingResourceAdaptor(UpstreamResourceAdaptor):
    """Fails allocations (``MemoryError``) once ``allocation_limit`` bytes are
    outstanding."""

    def __init__(self, upstream_mr, allocation_limit):
        super().__init__(upstream_mr)
        limit = parse_size(allocation_limit, "allocation_limit")
        _register(self, _ffi.limiting_create(upstream_mr._h(), limit))

    def get_allocated_bytes(self):
        """Bytes outstanding (each request rounded up to 256)."""
        return _ffi.limiting_allocated_bytes(self._h())

    def get_allocation_limit(self):
        """The limit in bytes."""
        return _ffi.limiting_allocation_limit(self._h())


class LoggingResourceAdaptor(UpstreamResourceAdaptor):
    """Logs every allocation and free to a CSV file (RMM's format).

    The file is ``log_file_name`` (or ``$RMM_LOG_FILE``) with ``.dev<N>`` added before the
    extension, N the current device.
    """

    def __init__(self, upstream_mr, log_file_name=None):
        super().__init__(upstream_mr)
        if log_file_name is None:
            log_file_name = os.getenv("RMM_LOG_FILE")
            if not log_file_name:
                raise ValueError(
                    "log_file_name= argument or RMM_LOG_FILE environment variable must be set"
                )
        if not isinstance(log_file_name, (str, os.PathLike)):
            raise TypeError(f"log_file_name must be a path, not {type(log_file_name).__name__}")
        name = os.path.abspath(_append_id(os.fspath(log_file_name), _ffi.get_current_device()))
        self._log_file_name = name
        _register(self, _ffi.logging_create(upstream_mr._h(), name))

    def flush(self):
        """Write buffered rows to the file."""
        _ffi.logging_flush(self._h())

    def get_file_name(self):
        """The log file's path."""
        return self._log_file_name

    @classmethod
    def _wrap(cls, handle):
        obj = super()._wrap(handle)
        obj._log_file_name = None
        return obj


def _statistics(t):
    return Statistics(
        current_bytes=t[0],
        current_count=t[1],
        peak_bytes=t[2],
        peak_count=t[3],
        total_bytes=t[4],
        total_count=t[5],
    )


class StatisticsResourceAdaptor(UpstreamResourceAdaptor):
    """Counts bytes and allocations (current, peak, total), in a stack of frames."""

    def __init__(self, upstream_mr):
        super().__init__(upstream_mr)
        _register(self, _ffi.statistics_create(upstream_mr._h()))

    @property
    def allocation_counts(self):
        """The counters of the current frame, as a ``Statistics``."""
        return _statistics(_ffi.statistics_counters(self._h()))

    def push_counters(self):
        """Start a new frame of zeroed counters; returns the counters below it."""
        return _statistics(_ffi.statistics_push(self._h()))

    def pop_counters(self):
        """End the current frame (folded into the one below); returns its counters.

        Raises ``IndexError`` when only the base frame is left (as RMM)."""
        try:
            return _statistics(_ffi.statistics_pop(self._h()))
        except InvalidArgumentError as e:
            raise IndexError(f"cannot pop the last counter pair ({e})") from None


class TrackingResourceAdaptor(UpstreamResourceAdaptor):
    """Tracks outstanding allocations (with their stacks when ``capture_stacks``)."""

    def __init__(self, upstream_mr, capture_stacks=False):
        super().__init__(upstream_mr)
        _register(self, _ffi.tracking_create(upstream_mr._h(), bool(capture_stacks)))

    def get_allocated_bytes(self):
        """Bytes outstanding."""
        return _ffi.tracking_allocated_bytes(self._h())

    def get_outstanding_allocations_str(self):
        """A report of the outstanding allocations."""
        return _ffi.tracking_outstanding_string(self._h())

    def log_outstanding_allocations(self):
        """Write the report to the debug log."""
        _ffi.tracking_log_outstanding(self._h())


class FailureCallbackResourceAdaptor(UpstreamResourceAdaptor):
    """Calls ``callback(nbytes)`` when an allocation runs out of memory and retries while
    it returns True.

    librmm.so reaches the callback through a weak reference to this object, so reference
    cycles through the callback are collected (see CallbackMemoryResource)."""

    def __init__(self, upstream_mr, callback):
        super().__init__(upstream_mr)
        if not callable(callback):
            raise TypeError("callback must be callable")
        self._callback = callback
        ref = weakref.ref(self)

        def on_failure(nbytes):
            adaptor = ref()
            return False if adaptor is None else adaptor._callback(nbytes)

        handle, self._keeper = _ffi.failure_callback_create(upstream_mr._h(), on_failure)
        _register(self, handle)


class PrefetchResourceAdaptor(UpstreamResourceAdaptor):
    """Prefetches each new allocation to the current device (managed memory)."""

    def __init__(self, upstream_mr):
        super().__init__(upstream_mr)
        _register(self, _ffi.prefetch_create(upstream_mr._h()))


_CLASSES = {
    "cuda_memory_resource": CudaMemoryResource,
    "managed_memory_resource": ManagedMemoryResource,
    "system_memory_resource": SystemMemoryResource,
    "sam_headroom_memory_resource": SamHeadroomMemoryResource,
    "cuda_async_memory_resource": CudaAsyncMemoryResource,
    "cuda_async_view_memory_resource": CudaAsyncViewMemoryResource,
    "pinned_host_memory_resource": PinnedHostMemoryResource,
    "cuda_async_managed_memory_resource": CudaAsyncManagedMemoryResource,
    "pool_memory_resource": PoolMemoryResource,
    "vmm_pool_memory_resource": VmmPoolMemoryResource,
    "arena_memory_resource": ArenaMemoryResource,
    "fixed_size_memory_resource": FixedSizeMemoryResource,
    "binning_memory_resource": BinningMemoryResource,
    "callback_memory_resource": CallbackMemoryResource,
    "limiting_resource_adaptor": LimitingResourceAdaptor,
    "logging_resource_adaptor": LoggingResourceAdaptor,
    "statistics_resource_adaptor": StatisticsResourceAdaptor,
    "tracking_resource_adaptor": TrackingResourceAdaptor,
    "failure_callback_resource_adaptor": FailureCallbackResourceAdaptor,
    "prefetch_resource_adaptor": PrefetchResourceAdaptor,
}


class _ForeignMemoryResource(DeviceMemoryResource):
    """A resource made by C or C++ code whose kind has no Python class."""


def _same_resource(a, b):
    """Whether handles ``a`` and ``b`` refer to the same resource object.

    Handles are not resource identities (each get makes a new handle); ``rmm_resource_id``
    is. ``is_equal`` would not do: two adaptors of one kind over one upstream are equal
    (either may free the other's memory) yet distinct objects.
    """
    return _ffi.resource_id(a) == _ffi.resource_id(b)


def _from_handle(handle, known=None):
    """The Python object of the resource ``handle`` refers to: ``known`` when that is the
    same resource, else a new object of the resource's kind (taking over ``handle``)."""
    if known is not None and known._handle is not None and not known._handle.released:
        if _same_resource(handle, known._handle):
            handle.release()
            return known
    cls = _CLASSES.get(handle.name(), _ForeignMemoryResource)
    return cls._wrap(handle)


# ---- the per-device registry (librmm.so's) -------------------------------------------------


def _check_device(device):
    if isinstance(device, bool) or not isinstance(device, int):
        raise TypeError(f"device must be an int, not {type(device).__name__}")
    return device


def _known(device, handle):
    """The Python object of ``device``'s resource (``handle``), remembered for the next
    get: as in RMM, repeated gets return the same object, also for a resource that Python
    did not set (the initial resource, or one set from C/C++)."""
    known = _per_device_mrs.get(device)
    mr = _from_handle(handle, known)
    if mr is not known:
        _per_device_mrs[device] = mr
    return mr


def get_per_device_resource(device):
    """The memory resource of ``device`` (as set from Python, C or C++)."""
    _check_device(device)
    return _known(device, _ffi.get_per_device_resource(device))


def set_per_device_resource(device, mr):
    """Make ``mr`` the memory resource of ``device`` (for Python, C and C++ code)."""
    _check_device(device)
    _check_mr(mr)
    previous = _ffi.set_per_device_resource(device, mr._h())
    _per_device_mrs[device] = mr
    previous.release()


def get_current_device_resource():
    """The memory resource of the current device."""
    handle = _ffi.get_current_device_resource()
    return _known(_ffi.get_current_device(), handle)


def set_current_device_resource(mr):
    """Make ``mr`` the memory resource of the current device."""
    set_per_device_resource(_ffi.get_current_device(), mr)


def _warn_type_getter_deprecated(name, instead):
    # RMM 26.06 deprecated the two type getters with a FutureWarning (26.08 removed them).
    if _gen.available(since="26.06"):
        warnings.warn(
            f"{name} is deprecated. Use {instead} instead.", FutureWarning, stacklevel=3
        )


def get_per_device_resource_type(device):
    """The class of ``device``'s memory resource: ``type(get_per_device_resource(device))``
    (RMM 25.02 to 26.06; 26.06 deprecated it with a ``FutureWarning``, 26.08 removed it)."""
    _warn_type_getter_deprecated(
        "get_per_device_resource_type", "type(get_per_device_resource(device))"
    )
    return type(get_per_device_resource(device))


def get_current_device_resource_type():
    """The class of the current device's memory resource: ``type(get_current_device_resource())``
    (RMM 25.02 to 26.06; 26.06 deprecated it with a ``FutureWarning``, 26.08 removed it)."""
    _warn_type_getter_deprecated(
        "get_current_device_resource_type", "type(get_current_device_resource())"
    )
    return type(get_current_device_resource())


def is_initialized():
    """Whether every device resource set from Python is usable (always, here: librmm.so
    gives every device an initial resource)."""
    return all(mr._handle is not None and not mr._handle.released for mr in _per_device_mrs.values())


def available_device_memory():
    """(free, total) bytes of the current device."""
    return _ffi.available_device_memory()


def _initialize(
    pool_allocator=False,
    managed_memory=False,
    initial_pool_size=None,
    maximum_pool_size=None,
    devices=0,
    logging=False,
    log_file_name=None,
    vmm_pool_allocator=False,
):
    """Set a new resource for each of ``devices`` (see ``rmm.reinitialize``)."""
    upstream = ManagedMemoryResource if managed_memory else CudaMemoryResource
    if vmm_pool_allocator and pool_allocator:
        raise ValueError("pool_allocator and vmm_pool_allocator cannot both be set")
    if vmm_pool_allocator and managed_memory:
        raise ValueError(
            "vmm_pool_allocator maps device memory: it cannot be used with managed_memory"
        )
    if pool_allocator or vmm_pool_allocator:
        kwargs = dict(
            initial_pool_size=None if initial_pool_size is None else parse_size(initial_pool_size, "initial_pool_size"),
            maximum_pool_size=None if maximum_pool_size is None else parse_size(maximum_pool_size, "maximum_pool_size"),
        )
    if devices is None:
        devices = [0]
    elif isinstance(devices, int) and not isinstance(devices, bool):
        devices = [devices]
    else:
        devices = list(devices)
    for d in devices:
        _check_device(d)
    original = _ffi.get_current_device()
    try:
        for device in devices:
            _ffi.set_current_device(device)
            if vmm_pool_allocator:
                mr = VmmPoolMemoryResource(**kwargs)
            elif pool_allocator:
                mr = PoolMemoryResource(upstream(), **kwargs)
            else:
                mr = upstream()
            if logging:
                mr = LoggingResourceAdaptor(mr, log_file_name)
            set_per_device_resource(device, mr)
    finally:
        _ffi.set_current_device(original)


def enable_logging(log_file_name=None):
    """Wrap each device's resource set from Python in a ``LoggingResourceAdaptor``."""
    for device, mr in list(_per_device_mrs.items()):
        if not isinstance(mr, LoggingResourceAdaptor):
            original = _ffi.get_current_device()
            try:
                _ffi.set_current_device(device)
                set_per_device_resource(device, LoggingResourceAdaptor(mr, log_file_name))
            finally:
                _ffi.set_current_device(original)


def disable_logging():
    """Undo ``enable_logging``."""
    for device, mr in list(_per_device_mrs.items()):
        if isinstance(mr, LoggingResourceAdaptor):
            set_per_device_resource(device, mr.get_upstream())


def get_log_filenames():
    """Device -> log file name (None for a device without logging)."""
    return {
        device: mr.get_file_name() if isinstance(mr, LoggingResourceAdaptor) else None
        for device, mr in _per_device_mrs.items()
    }


def _flush_logs():
    """Flush the file of every ``LoggingResourceAdaptor`` that is a device's resource set
    from Python."""
    for mr in _per_device_mrs.values():
        if isinstance(mr, LoggingResourceAdaptor):
            mr.flush()
