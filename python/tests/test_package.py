import importlib
import os
import subprocess
import sys

import pytest

import rmm
import rmm._cuda.gpu
import rmm.pylibrmm.stream


def test_version():
    # The newest API generation served names the package.
    assert rmm.__version__ == "26.10.00"
    assert isinstance(rmm.__git_commit__, str)
    assert rmm._version.SUPPORTED_API_VERSIONS == ("25.02", "25.10", "26.06", "26.08", "26.10")
    assert rmm.__version__.startswith(rmm._version.SUPPORTED_API_VERSIONS[-1] + ".")
    import importlib.metadata

    # The wheel's version (python/Cargo.toml) is the same generation.
    assert importlib.metadata.version("rmm") == "26.10.0"


def test_bundled_library_is_the_loaded_one():
    path = rmm.get_library_path()
    assert os.path.samefile(path, os.path.join(rmm.get_lib_dir(), "librmm.so"))


def test_headers_and_cmake_package():
    inc = rmm.get_include()
    assert os.path.isfile(os.path.join(inc, "rmm", "rmm.h"))
    assert os.path.isfile(os.path.join(inc, "rmm", "mr", "device", "pool_memory_resource.hpp"))
    cmake = rmm.get_cmake_dir()
    config = open(os.path.join(cmake, "rmmConfig.cmake")).read()
    assert "@" not in config.replace("@PACKAGE", "")
    assert "PACKAGE_PREFIX_DIR" in config
    assert os.path.isfile(os.path.join(cmake, "rmmConfigVersion.cmake"))
    # the CMake package's prefix is the package directory: include/ and lib/ beside it
    prefix = os.path.normpath(os.path.join(cmake, "..", "..", ".."))
    assert os.path.samefile(prefix, os.path.dirname(rmm.__file__))


def test_runtime_is_host():
    # Only meaningful where the tests run on the host emulation (the default here); on a GPU
    # machine (RMM_RUNTIME=cuda or hip) the runtime is that GPU's.
    if os.environ.get("RMM_RUNTIME", "host") != "host":
        pytest.skip(f"RMM_RUNTIME={os.environ['RMM_RUNTIME']}: not the host runtime")
    assert rmm._ffi.runtime_name() == "host"
    assert rmm._cuda.gpu.getDeviceCount() >= 1
    assert rmm._cuda.gpu.getDevice() == 0


@pytest.mark.parametrize("version", ["25.02", "25.10"])
def test_stream_aliases(version, run_in_generation):
    # rmm._cuda.stream: RMM 25.02 and 25.10 (test_generations.py checks it is gone after).
    run_in_generation(
        version,
        """
        import warnings
        import rmm, rmm.pylibrmm.stream
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            import rmm._cuda.stream
        assert rmm._cuda.stream.Stream is rmm.pylibrmm.stream.Stream
        assert rmm.pylibrmm.stream.DEFAULT_STREAM.is_default()
        assert not rmm.pylibrmm.stream.PER_THREAD_DEFAULT_STREAM.is_default()
        """,
    )


def test_exceptions_hierarchy():
    from rmm._exceptions import InvalidArgumentError, OutOfMemoryError

    assert issubclass(OutOfMemoryError, MemoryError)
    assert issubclass(OutOfMemoryError, rmm.RMMError)
    assert issubclass(InvalidArgumentError, ValueError)
    # What RMM raises as RuntimeError (C++ logic and runtime errors through Cython) is one.
    from rmm._exceptions import CallbackError, CUDAError, NoRuntimeError, UnsupportedError

    for cls in (InvalidArgumentError, CallbackError, CUDAError, NoRuntimeError, UnsupportedError):
        assert issubclass(cls, RuntimeError), cls
    assert not issubclass(OutOfMemoryError, RuntimeError)
    e = rmm.RMMError(3, "boom")
    assert e.errcode == 3 and str(e) == "boom"


def test_import_rmm_makes_cuda_gpu_reachable():
    # RMM's own tests use rmm._cuda.gpu after a bare `import rmm`.
    code = "import rmm; print(rmm._cuda.gpu.getDevice())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "0"


def test_rmms_other_module_paths(run_in_generation):
    from rmm.librmm._logger import level_enum

    assert level_enum is rmm.level_enum
    # rmm.pylibrmm.cuda_stream: RMM 25.02 and 25.10.
    run_in_generation(
        "25.10",
        """
        import rmm
        from rmm.pylibrmm.cuda_stream import CudaStream
        s = CudaStream()
        assert int(s) != 0
        rmm.pylibrmm.stream.Stream(int(s)).synchronize()
        buf = rmm.DeviceBuffer(size=64, stream=rmm.pylibrmm.stream.Stream(int(s)))
        del buf
        """,
    )


@pytest.mark.parametrize("version", ["25.02", "25.10"])
def test_old_stream_module_warns_as_rmms_does(version, run_in_generation):
    run_in_generation(
        version,
        """
        import pytest, rmm, rmm.pylibrmm.stream
        with pytest.warns(FutureWarning, match="rmm.pylibrmm.stream"):
            import rmm._cuda.stream as mod
        assert mod.Stream is rmm.pylibrmm.stream.Stream
        ns = {}
        exec("from rmm._cuda.stream import *", ns)
        assert {k for k in ns if not k.startswith("__")} == {
            "DEFAULT_STREAM", "LEGACY_DEFAULT_STREAM", "PER_THREAD_DEFAULT_STREAM", "Stream"
        }
        """,
    )


def test_module_level_names_rmm_exports():
    from rmm.pylibrmm import helper

    m = helper.pattern.match("1.5GiB")
    assert (m.group(1), m.group(2)) == ("1.5", "GiB")
    assert helper.pattern.match("3\tkb").group(2) == "kb"
    assert helper.pattern.match("12").group(2) is None
    assert helper.pattern.match(" 1GB") is None  # RMM's expression: no leading blanks
    assert helper.pattern.match("1 xb") is None

    import rmm._version

    assert rmm._version.__all__ == ["SUPPORTED_API_VERSIONS", "__git_commit__", "__version__"]
