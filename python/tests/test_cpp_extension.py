"""A C++ extension built against the wheel's CMake package (``rmm.get_cmake_dir()``) shares the
per-device registry with Python: a pool set from C++ is what ``rmm.mr`` sees (and
allocations land in it), a resource set from Python is what C++ sees.

Needs cmake, make (or ninja) and a C++ compiler; skipped without them (CI installs them).
"""

import ctypes
import os
import shutil
import subprocess

import pytest

import rmm
import rmm.mr as mr

HERE = os.path.dirname(os.path.abspath(__file__))
MiB = 1 << 20


def _compiler():
    cxx = os.environ.get("CXX")
    if cxx:
        return shutil.which(cxx.split()[0])
    return next(filter(None, map(shutil.which, ("c++", "g++", "clang++"))), None)


@pytest.fixture(scope="module")
def ext(tmp_path_factory):
    cmake = shutil.which("cmake")
    if cmake is None:
        pytest.skip("cmake is not installed")
    if _compiler() is None:
        pytest.skip("no C++ compiler (c++, g++, clang++ or $CXX)")
    generator = []
    if shutil.which("make") is None:
        if shutil.which("ninja") is None:
            pytest.skip("neither make nor ninja is installed")
        generator = ["-G", "Ninja"]
    build = tmp_path_factory.mktemp("cpp_ext_build")
    configure = [
        cmake,
        "-S",
        os.path.join(HERE, "cpp_ext"),
        "-B",
        str(build),
        *generator,
        f"-Drmm_DIR={rmm.get_cmake_dir()}",
        # no GPU toolkit is needed: librmm.so loads the runtime itself
        "-DRMM_NO_GPU_RUNTIME_INTERFACE=ON",
        "-DCMAKE_BUILD_TYPE=Release",
    ]
    for cmd in (configure, [cmake, "--build", str(build), "-j", "4"]):
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}"
    lib = ctypes.CDLL(str(build / "librmm_cpp_ext.so"))
    size_t, ptr = ctypes.c_size_t, ctypes.c_void_p
    for name, restype, argtypes in [
        ("ext_set_pool", ctypes.c_int, [size_t]),
        ("ext_reset", ctypes.c_int, []),
        ("ext_pool_size", size_t, []),
        ("ext_current_is_pool", ctypes.c_int, []),
        ("ext_current_is_initial", ctypes.c_int, []),
        ("ext_allocate", ptr, [size_t]),
        ("ext_deallocate", ctypes.c_int, [ptr, size_t]),
    ]:
        f = getattr(lib, name)
        f.restype, f.argtypes = restype, argtypes
    yield lib
    lib.ext_reset()


def test_one_librmm_in_the_process(ext):
    # the extension's DT_NEEDED librmm.so is the one the rmm package loaded
    maps = open("/proc/self/maps").read()
    paths = {line.split()[-1] for line in maps.splitlines() if line.endswith("/librmm.so")}
    assert len(paths) == 1
    assert os.path.samefile(paths.pop(), rmm.get_library_path())


def test_pool_set_from_cpp_seen_from_python(ext):
    assert ext.ext_set_pool(0) == 0
    try:
        assert ext.ext_current_is_pool()
        current = mr.get_current_device_resource()
        assert isinstance(current, mr.PoolMemoryResource)
        assert type(mr.get_current_device_resource()) is mr.PoolMemoryResource
        assert isinstance(current.get_upstream(), mr.CudaMemoryResource)
        assert mr.get_current_device_resource() is current
        # Python's allocations land in C++'s pool: it grows from empty
        assert ext.ext_pool_size() == 0
        buf = rmm.DeviceBuffer(size=MiB)
        assert buf.mr is current
        assert ext.ext_pool_size() >= MiB
        assert current.pool_size() == ext.ext_pool_size()
        free = current.pool_stats()["bytes_free"]
        del buf
        assert current.pool_stats()["bytes_free"] == free + MiB
        # and C++'s allocations are seen by Python's view of the pool
        p = ext.ext_allocate(4096)
        assert p
        assert current.pool_stats()["bytes_free"] == free + MiB - 4096
        assert ext.ext_deallocate(p, 4096) == 0
        assert ext.ext_current_is_pool()  # C++ still gets its own object back
    finally:
        assert ext.ext_reset() == 0
    assert ext.ext_current_is_initial()
    assert type(mr.get_current_device_resource()) is mr.CudaMemoryResource


def test_resource_set_from_python_seen_from_cpp(ext):
    assert ext.ext_current_is_initial()
    stats = mr.StatisticsResourceAdaptor(mr.CudaMemoryResource())
    mr.set_current_device_resource(stats)
    assert not ext.ext_current_is_initial()
    p = ext.ext_allocate(4096)
    assert p
    counts = stats.allocation_counts
    assert (counts.current_bytes, counts.current_count) == (4096, 1)
    assert ext.ext_deallocate(p, 4096) == 0
    assert stats.allocation_counts.current_bytes == 0
    # replaced from Python again: C++ follows
    pool = mr.PoolMemoryResource(mr.CudaMemoryResource(), initial_pool_size=2 * MiB)
    mr.set_current_device_resource(pool)
    p = ext.ext_allocate(MiB)
    assert p
    assert pool.pool_stats()["bytes_free"] == MiB
    assert stats.allocation_counts.total_bytes == 4096  # nothing more went to stats
    assert ext.ext_deallocate(p, MiB) == 0
    rmm._ffi.set_current_device_resource(None).release()
    assert ext.ext_current_is_initial()
