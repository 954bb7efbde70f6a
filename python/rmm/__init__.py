"""rmm: RMM's Python API over rmm-rs's librmm.so.

The extension ``rmm._ffi`` calls the C functions of the librmm.so in this package (the
one C and C++ code in the process share), so the per-device memory resource is the same
for Python, C and C++.

The package serves the Python API of RMM 25.02, 25.10, 26.06, 26.08 and 26.10; a process
follows one of them (``RMM_API_VERSION`` at import, else 26.10): ``api_version()`` names it,
``set_api_version()`` changes it before the first allocation.
"""

from rmm._version import __git_commit__, __version__
from rmm._exceptions import RMMError  # noqa: I001  (the extension raises these)
from rmm import _ffi  # noqa: F401
from rmm._generation import api_version, set_api_version
from rmm import mr
from rmm._paths import get_cmake_dir, get_include, get_lib_dir, get_library_path
from rmm.mr import disable_logging, enable_logging, get_log_filenames
from rmm.pylibrmm.device_buffer import DeviceBuffer
from rmm.pylibrmm.logger import (
    flush_logger,
    get_flush_level,
    get_logging_level,
    level_enum,
    set_flush_level,
    set_logging_level,
    should_log,
)
from rmm.rmm import (
    is_initialized,
    register_reinitialize_hook,
    reinitialize,
    unregister_reinitialize_hook,
)

__all__ = [
    "DeviceBuffer",
    "RMMError",
    "__git_commit__",
    "__version__",
    "api_version",
    "disable_logging",
    "enable_logging",
    "flush_logger",
    "get_cmake_dir",
    "get_flush_level",
    "get_include",
    "get_lib_dir",
    "get_library_path",
    "get_log_filenames",
    "get_logging_level",
    "is_initialized",
    "level_enum",
    "mr",
    "register_reinitialize_hook",
    "reinitialize",
    "set_api_version",
    "set_flush_level",
    "set_logging_level",
    "should_log",
    "unregister_reinitialize_hook",
]
