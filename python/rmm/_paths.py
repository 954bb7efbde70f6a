"""Where the wheel keeps librmm.so, the C/C++ headers and the CMake package."""

import os

_here = os.path.dirname(os.path.abspath(__file__))


def get_include():
    """Directory to add to the include path of C/C++ code using rmm-rs (``rmm/rmm.h``, the
    C++ wrapper ``rmm/mr/...``)."""
    return os.path.join(_here, "include")


def get_lib_dir():
    """Directory holding the wheel's ``librmm.so``."""
    return os.path.join(_here, "lib")


def get_cmake_dir():
    """Directory holding ``rmmConfig.cmake``: pass it as ``rmm_DIR`` (or its grand-grand-parent
    as ``CMAKE_PREFIX_PATH``) so that ``find_package(rmm)`` gives the target ``rmm::rmm``."""
    return os.path.join(_here, "lib", "cmake", "rmm")


def get_library_path():
    """Path of the librmm.so loaded in this process (the one the extension calls)."""
    from rmm import _ffi

    return _ffi.library_path()
