"""Device helpers (RMM's ``rmm._cuda.gpu``) over librmm.so.

RMM's module calls the CUDA runtime through cuda-python; this one asks librmm.so, so it
needs no cuda-python and answers on every runtime librmm.so drives (CUDA, HIP, the host
emulation). Failures raise ``CUDARuntimeError`` whose ``status`` is the runtime's error
code (``cudaError_t``'s value: it compares equal to cuda-python's enum members).
"""

import operator

from rmm import _ffi
from rmm._exceptions import RMMError

# cudaError_t values and the runtime's name and description of the codes that these
# helpers can meet (CUDA's numbers; HIP uses the same ones for these).
_ERRORS = {
    1: ("cudaErrorInvalidValue", "invalid argument"),
    2: ("cudaErrorMemoryAllocation", "out of memory"),
    3: ("cudaErrorInitializationError", "initialization error"),
    35: (
        "cudaErrorInsufficientDriver",
        "CUDA driver version is insufficient for CUDA runtime version",
    ),
    100: ("cudaErrorNoDevice", "no CUDA-capable device is detected"),
    101: ("cudaErrorInvalidDevice", "invalid device ordinal"),
    400: ("cudaErrorInvalidResourceHandle", "invalid resource handle"),
    801: ("cudaErrorNotSupported", "operation not supported"),
    999: ("cudaErrorUnknown", "unknown error"),
}

# The cudaError_t that stands for a librmm.so failure that carries no runtime code, by
# rmm_status_t: an invalid argument, out of memory, no usable runtime, unsupported.
_STATUS_CODES = {1: 1, 2: 2, 5: 100, 6: 801}


class CUDARuntimeError(RuntimeError):
    """A runtime call failed (RMM's ``rmm._cuda.gpu.CUDARuntimeError``).

    ``status`` is the runtime's error code (a ``cudaError_t`` value, as an int); ``msg``
    the message.
    """

    def __init__(self, status, msg=None):
        self.status = status
        if msg is None:
            name, text = _ERRORS.get(int(status), (f"cudaError {int(status)}", "runtime error"))
            msg = f"{name}: {text}"
        self.msg = msg
        super().__init__(msg)

    def __reduce__(self):
        return (type(self), (self.status, self.msg))


class CUDADriverError(RuntimeError):
    """A driver call failed (RMM's ``CUDADriverError``; ``status`` is a ``CUresult``
    value). Nothing here calls the driver API; the class is for code that catches it."""

    def __init__(self, status, msg=None):
        self.status = status
        self.msg = f"CUresult {int(status)}" if msg is None else msg
        super().__init__(self.msg)

    def __reduce__(self):
        return (type(self), (self.status, self.msg))


def _runtime_error(e):
    """The ``CUDARuntimeError`` for a failure ``e`` (an ``RMMError``) of librmm.so."""
    status = getattr(e, "runtime_code", 0) or _STATUS_CODES.get(e.errcode, 999)
    name = _ERRORS.get(status, (f"cudaError {status}", None))[0]
    return CUDARuntimeError(status, f"{name}: {e.msg}")


def _call(f, *args):
    try:
        return f(*args)
    except RMMError as e:
        raise _runtime_error(e) from e


def _int_arg(value, name):
    """``value`` as an int: an int, or an enum member (or other object) standing for one."""
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an int, not bool")
    try:
        return operator.index(value)
    except TypeError:
        pass
    inner = getattr(value, "value", None)
    if isinstance(inner, int) and not isinstance(inner, bool):
        return inner
    raise TypeError(
        f"{name} must be an int or an enum member with an int value, not {type(value).__name__}"
    )


def _device_arg(device):
    """``device`` as an int a runtime call can take (``CUDARuntimeError`` with
    ``cudaErrorInvalidDevice`` when it cannot be a device ordinal)."""
    device = _int_arg(device, "device")
    if not -(2**31) <= device < 2**31:
        raise CUDARuntimeError(101, f"cudaErrorInvalidDevice: invalid device ordinal {device}")
    return device


def driverGetVersion():
    """The newest CUDA version the installed driver supports, as ``1000 * major + 10 *
    minor`` (CUDA 12.8: 12080); 0 when no driver is installed. On HIP, HIP's numbering;
    the host emulation reports 13000.

    Raises ``CUDARuntimeError`` on failure."""
    return _call(_ffi.driver_get_version)


def runtimeGetVersion():
    """The version of the runtime in use, as ``1000 * major + 10 * minor`` (CUDA 12.5:
    12050). On HIP, HIP's numbering; the host emulation reports 13000 (the CUDA version it
    emulates). RMM reports the version of the runtime cuda-python was built for; this is
    the one librmm.so loaded.

    Raises ``CUDARuntimeError`` on failure."""
    return _call(_ffi.runtime_get_version)


def getDevice():
    """The calling thread's current device.

    Raises ``CUDARuntimeError`` on failure (``status`` ``cudaErrorNoDevice`` without a
    usable device)."""
    return _call(_ffi.get_current_device)


def setDevice(device: int):
    """Make ``device`` current for the calling thread.

    Raises ``CUDARuntimeError`` (``cudaErrorInvalidDevice``) for a device out of range."""
    device = _int_arg(device, "device")
    count = getDeviceCount()
    if not 0 <= device < count:
        raise CUDARuntimeError(
            101, f"cudaErrorInvalidDevice: invalid device ordinal {device} ({count} device(s))"
        )
    _call(_ffi.set_current_device, device)


def getDeviceCount():
    """The number of devices.

    Raises ``CUDARuntimeError`` on failure."""
    return _call(_ffi.get_device_count)


def getDeviceAttribute(attr, device: int):
    """The integer attribute ``attr`` of ``device``.

    ``attr`` is CUDA's number for the attribute: an int, or a member of an enum with int
    values such as cuda-python's ``cudaDeviceAttr`` (e.g.
    ``cudaDeviceAttr.cudaDevAttrPageableMemoryAccess``, 88). On HIP the attribute is mapped
    to HIP's; one that HIP lacks raises ``CUDARuntimeError`` with ``cudaErrorNotSupported``.

    Raises ``CUDARuntimeError`` on failure (``cudaErrorInvalidDevice`` for a bad device,
    ``cudaErrorInvalidValue`` for a number that is no attribute)."""
    attr = _int_arg(attr, "attr")
    device = _int_arg(device, "device")
    if not -(2**31) <= attr < 2**31:
        raise CUDARuntimeError(1, f"cudaErrorInvalidValue: no device attribute {attr}")
    device = _device_arg(device)
    return _call(_ffi.device_get_attribute, attr, device)


def deviceGetName(device: int):
    """The name of ``device`` (``str``, e.g. ``"NVIDIA H100 80GB HBM3"``).

    Raises ``CUDARuntimeError`` on failure (``cudaErrorInvalidDevice`` for a bad device).
    RMM asks the driver (``cuDeviceGetName``) and raises ``CUDADriverError``; this asks the
    runtime librmm.so drives, so it answers on HIP and the host emulation too."""
    device = _device_arg(device)
    return _call(_ffi.device_get_name, device)


class DeviceProperties:
    """The properties of a device that :func:`getDeviceProperties` returns where it cannot
    return cuda-python's ``cudaDeviceProp``: the same field names, for the fields every
    runtime librmm.so drives can answer. ``name`` is ``bytes``, as in ``cudaDeviceProp``."""

    # cudaDeviceProp field -> CUDA's cudaDeviceAttr number.
    _ATTRIBUTES = {
        "maxThreadsPerBlock": 1,
        "warpSize": 10,
        "multiProcessorCount": 16,
        "integrated": 18,
        "pciBusID": 33,
        "pciDeviceID": 34,
        "l2CacheSize": 38,
        "pciDomainID": 50,
        "major": 75,
        "minor": 76,
        "managedMemory": 83,
        "pageableMemoryAccess": 88,
        "concurrentManagedAccess": 89,
        "memoryPoolsSupported": 115,
    }

    def __init__(self, device: int):
        self.name = deviceGetName(device).encode()
        for field, attr in self._ATTRIBUTES.items():
            try:
                value = getDeviceAttribute(attr, device)
            except CUDARuntimeError as e:
                if int(e.status) != 801:  # cudaErrorNotSupported: a field HIP lacks
                    raise
                value = 0
            setattr(self, field, value)
        current = getDevice()
        try:
            if device != current:
                setDevice(device)
            self.totalGlobalMem = _ffi.available_device_memory()[1]
        finally:
            if device != current:
                setDevice(current)

    def __repr__(self):
        return (
            f"DeviceProperties(name={self.name!r}, major={self.major}, minor={self.minor}, "
            f"multiProcessorCount={self.multiProcessorCount}, "
            f"totalGlobalMem={self.totalGlobalMem})"
        )


def getDeviceProperties(device: int):
    """The properties of ``device``.

    On the CUDA runtime with cuda-python installed, cuda-python's ``cudaDeviceProp``, as
    RMM returns it; otherwise a :class:`DeviceProperties` with the same field names for
    the fields every runtime answers (``name``, ``major``, ``minor``,
    ``multiProcessorCount``, ``totalGlobalMem``, ...).

    Raises ``CUDARuntimeError`` on failure (``cudaErrorInvalidDevice`` for a bad device)."""
    device = _device_arg(device)
    if _ffi.runtime_name() == "cuda":
        try:
            from cuda.bindings import runtime
        except ImportError:
            runtime = None
        if runtime is not None:
            status, prop = runtime.cudaGetDeviceProperties(device)
            if status != runtime.cudaError_t.cudaSuccess:
                raise CUDARuntimeError(int(status))
            return prop
    return DeviceProperties(device)


__all__ = [
    "CUDARuntimeError",
    "CUDADriverError",
    "driverGetVersion",
    "runtimeGetVersion",
    "getDevice",
    "setDevice",
    "getDeviceCount",
    "getDeviceAttribute",
    "getDeviceProperties",
    "deviceGetName",
]
