"""help() text: every public module, class, function, method and property of the package
has a docstring of its own, and RMM 25.02's public names are here (so they get one too).

The checks run in this process's API generation (the newest, unless RMM_API_VERSION says
otherwise) and, through test_under_each_generation, in a child process per other generation:
modules and names that only older generations have are documented too."""

import importlib
import inspect
import os
import pkgutil
import subprocess
import sys
import types

import pytest

import rmm

# RMM 25.02's public Python names (python/rmm/rmm/**: __all__, module-level definitions and
# the public members of their classes).
_MR = [
    "ArenaMemoryResource",
    "BinningMemoryResource",
    "CallbackMemoryResource",
    "CudaAsyncMemoryResource",
    "CudaMemoryResource",
    "DeviceMemoryResource",
    "FailureCallbackResourceAdaptor",
    "FixedSizeMemoryResource",
    "LimitingResourceAdaptor",
    "LoggingResourceAdaptor",
    "ManagedMemoryResource",
    "PoolMemoryResource",
    "PrefetchResourceAdaptor",
    "SamHeadroomMemoryResource",
    "StatisticsResourceAdaptor",
    "SystemMemoryResource",
    "TrackingResourceAdaptor",
    "UpstreamResourceAdaptor",
    "available_device_memory",
    "disable_logging",
    "enable_logging",
    "get_current_device_resource",
    "get_current_device_resource_type",
    "get_log_filenames",
    "get_per_device_resource",
    "get_per_device_resource_type",
    "is_initialized",
    "set_current_device_resource",
    "set_per_device_resource",
]
_STREAMS = ["Stream", "DEFAULT_STREAM", "LEGACY_DEFAULT_STREAM", "PER_THREAD_DEFAULT_STREAM"]
RMM_25_02 = {
    "rmm": [
        "DeviceBuffer",
        "RMMError",
        "disable_logging",
        "enable_logging",
        "flush_logger",
        "get_flush_level",
        "get_log_filenames",
        "get_logging_level",
        "is_initialized",
        "level_enum",
        "mr",
        "register_reinitialize_hook",
        "reinitialize",
        "set_flush_level",
        "set_logging_level",
        "should_log",
        "unregister_reinitialize_hook",
    ],
    "rmm.mr": _MR,
    "rmm.rmm": [
        "RMMError",
        "is_initialized",
        "register_reinitialize_hook",
        "reinitialize",
        "unregister_reinitialize_hook",
    ],
    "rmm.statistics": [
        "ProfilerRecords",
        "Statistics",
        "default_profiler_records",
        "enable_statistics",
        "get_statistics",
        "pop_statistics",
        "profiler",
        "push_statistics",
        "statistics",
    ],
    "rmm.pylibrmm": ["DeviceBuffer"],
    "rmm.pylibrmm.device_buffer": [
        "DeviceBuffer",
        "copy_device_to_ptr",
        "copy_host_to_ptr",
        "copy_ptr_to_host",
        "to_device",
    ],
    "rmm.pylibrmm.memory_resource": _MR,
    "rmm.pylibrmm.stream": _STREAMS,
    "rmm.pylibrmm.logger": [
        "flush_logger",
        "get_flush_level",
        "get_logging_level",
        "set_flush_level",
        "set_logging_level",
        "should_log",
    ],
    "rmm.pylibrmm.cuda_stream": ["CudaStream"],
    "rmm._cuda.stream": _STREAMS,
    "rmm._cuda.gpu": [
        "CUDADriverError",
        "CUDARuntimeError",
        "deviceGetName",
        "driverGetVersion",
        "getDevice",
        "getDeviceAttribute",
        "getDeviceCount",
        "getDeviceProperties",
        "runtimeGetVersion",
        "setDevice",
    ],
    "rmm.allocators.cupy": ["rmm_cupy_allocator"],
    "rmm.allocators.numba": ["RMMNumbaManager", "_numba_memory_manager"],
    "rmm.allocators.torch": ["rmm_torch_allocator"],
}
RMM_25_02_MEMBERS = {
    "rmm.DeviceBuffer": [
        "capacity",
        "copy",
        "copy_from_device",
        "copy_from_host",
        "copy_to_host",
        "nbytes",
        "prefetch",
        "ptr",
        "reserve",
        "resize",
        "size",
        "to_device",
        "tobytes",
    ],
    "rmm.pylibrmm.stream.Stream": ["is_default", "synchronize"],
    "rmm.mr.DeviceMemoryResource": ["allocate", "deallocate"],
    "rmm.mr.UpstreamResourceAdaptor": ["get_upstream"],
    "rmm.mr.PoolMemoryResource": ["pool_size"],
    "rmm.mr.BinningMemoryResource": ["add_bin", "bin_mrs"],
    "rmm.mr.LimitingResourceAdaptor": ["get_allocated_bytes", "get_allocation_limit"],
    "rmm.mr.LoggingResourceAdaptor": ["flush", "get_file_name"],
    "rmm.mr.StatisticsResourceAdaptor": ["allocation_counts", "pop_counters", "push_counters"],
    "rmm.mr.TrackingResourceAdaptor": [
        "get_allocated_bytes",
        "get_outstanding_allocations_str",
        "log_outstanding_allocations",
    ],
    "rmm.statistics.ProfilerRecords": ["add", "records", "report"],
}

# RMM 25.02 names that may be missing here, and why.
MAY_BE_ABSENT = {
    ("rmm.pylibrmm.cuda_stream", "CudaStream"): "Cython-only in RMM (cdef methods)",
    # cuda-python's cudaDeviceProp / the driver API in RMM; nothing in rmm uses them
    # (docs/python.md, "Device queries")
    ("rmm._cuda.gpu", "deviceGetName"): "not implemented",
    ("rmm._cuda.gpu", "getDeviceProperties"): "not implemented",
}


def _public_modules():
    """rmm and its submodules, but private ones (rmm._ffi, rmm._paths, ...); rmm._cuda is
    RMM's public (if old) path and rmm._exceptions holds the exceptions users catch."""
    names = ["rmm"]
    for info in pkgutil.walk_packages(rmm.__path__, "rmm."):
        parts = info.name.split(".")[1:]
        if all(not p.startswith("_") or p in ("_cuda", "_exceptions") for p in parts):
            names.append(info.name)
    return sorted(set(names))


def _import(name):
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError:
        return None


def _public_names(module):
    names = set(getattr(module, "__all__", ()))
    if not names:
        names = {
            n
            for n, v in vars(module).items()
            if not n.startswith("_") and getattr(v, "__module__", "").startswith("rmm")
        }
    names |= {n for n in RMM_25_02.get(module.__name__, ()) if hasattr(module, n)}
    return sorted(names)


def _ours(obj):
    return (
        (inspect.isclass(obj) or inspect.isfunction(obj))
        and getattr(obj, "__module__", "").startswith("rmm")
    )


def _own_doc(obj):
    """The docstring of ``obj`` itself (a class's, not inherited from its bases)."""
    doc = vars(obj).get("__doc__") if inspect.isclass(obj) else obj.__doc__
    return (doc or "").strip()


def _member_doc(value):
    if isinstance(value, (staticmethod, classmethod)):
        value = value.__func__
    if isinstance(value, property):
        return (value.__doc__ or (value.fget and value.fget.__doc__) or "").strip()
    if isinstance(value, types.MemberDescriptorType):
        return (inspect.getdoc(value) or "").strip()  # a __slots__ dict's value (help() shows it)
    if inspect.isfunction(value):
        return (value.__doc__ or "").strip()
    return None  # not documentable (a constant, an enum member, a field default)


MODULES = _public_modules()


def test_modules_found():
    for name in RMM_25_02:
        if name in MODULES or (name, RMM_25_02[name][0]) in MAY_BE_ABSENT:
            continue
        pytest.fail(f"{name} is not a module of the package")


@pytest.mark.parametrize("name", MODULES)
def test_module_docstrings(name):
    module = _import(name)
    if module is None:
        pytest.skip(f"{name}: not a module of API generation {rmm.api_version()}")
    missing = []
    if not (module.__doc__ or "").strip():
        missing.append(name)
    for attr in _public_names(module):
        obj = getattr(module, attr)
        if not _ours(obj):
            continue
        if not _own_doc(obj):
            missing.append(f"{name}.{attr}")
        if inspect.isclass(obj):
            for member, value in vars(obj).items():
                if member.startswith("_"):
                    continue
                doc = _member_doc(value)
                if doc is not None and not doc:
                    missing.append(f"{name}.{attr}.{member}")
    assert missing == [], f"no docstring: {missing}"


@pytest.mark.parametrize("name", sorted(RMM_25_02))
def test_rmm_25_02_names_exist(name):
    if rmm.api_version() != "25.02":
        pytest.skip("checked with RMM_API_VERSION=25.02 (test_under_each_generation)")
    module = _import(name)
    absent = [
        n
        for n in RMM_25_02[name]
        if (module is None or not hasattr(module, n)) and (name, n) not in MAY_BE_ABSENT
    ]
    assert absent == [], f"RMM 25.02 names missing from {name}: {absent}"


@pytest.mark.parametrize("path", sorted(RMM_25_02_MEMBERS))
def test_rmm_25_02_members_documented(path):
    module_name, cls_name = path.rsplit(".", 1)
    cls = getattr(importlib.import_module(module_name), cls_name)
    for member in RMM_25_02_MEMBERS[path]:
        value = inspect.getattr_static(cls, member)
        doc = _member_doc(value)
        assert doc, f"{path}.{member} has no docstring"


@pytest.mark.parametrize("version", rmm._version.SUPPORTED_API_VERSIONS)
def test_under_each_generation(version):
    if version == rmm.api_version():
        pytest.skip(f"{version} is this process's generation")
    env = dict(os.environ, RMM_API_VERSION=version)
    args = ["-q", "-p", "no:cacheprovider", "-k", "not test_under_each_generation"]
    run = subprocess.run(
        [sys.executable, "-m", "pytest", *args, os.path.basename(__file__)],
        cwd=os.path.dirname(os.path.abspath(__file__)),
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = run.stdout[-4000:] + run.stderr[-2000:]
    assert run.returncode == 0, f"RMM_API_VERSION={version}:\n{output}"
