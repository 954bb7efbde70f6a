"""Device helpers over librmm.so (RMM's ``rmm._cuda.gpu``, partial)."""

from rmm import _ffi
from rmm._exceptions import RMMError


class CUDARuntimeError(RMMError):
    """A runtime call of these helpers failed."""


def getDevice():
    """The calling thread's current device."""
    return _ffi.get_current_device()


def setDevice(device):
    """Make ``device`` current for the calling thread."""
    if isinstance(device, bool) or not isinstance(device, int):
        raise TypeError(f"device must be an int, not {type(device).__name__}")
    _ffi.set_current_device(device)


def getDeviceCount():
    """Number of devices."""
    return _ffi.get_device_count()


__all__ = ["CUDARuntimeError", "getDevice", "setDevice", "getDeviceCount"]
