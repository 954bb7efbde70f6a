"""rmm.allocators: cupy / numba / torch, on the host runtime (none of the libraries has a
GPU here). The modules import without their library; the torch C functions are called
through ctypes; the Numba plugin runs against a small fake of Numba's EMM interface."""

import ctypes
import importlib
import sys
import types
import weakref

import pytest

import rmm
import rmm.mr
from rmm import _ffi
from rmm.statistics import get_statistics, statistics


def _absent(monkeypatch, *names):
    """Make ``import name`` fail for each name, and forget the allocator modules."""
    for n in names:
        monkeypatch.setitem(sys.modules, n, None)  # None in sys.modules: ImportError
    for mod in ("rmm.allocators.cupy", "rmm.allocators.numba", "rmm.allocators.torch"):
        monkeypatch.delitem(sys.modules, mod, raising=False)


def test_cupy_module_without_cupy(monkeypatch):
    _absent(monkeypatch, "cupy")
    m = importlib.import_module("rmm.allocators.cupy")
    assert m.cupy is None
    assert callable(m.rmm_cupy_allocator)
    with pytest.raises(ModuleNotFoundError, match="cupy"):
        m.rmm_cupy_allocator(16)


def test_numba_module_without_numba(monkeypatch):
    _absent(monkeypatch, "numba", "numba.cuda")
    m = importlib.import_module("rmm.allocators.numba")
    assert m.RMMNumbaManager is None
    assert m._numba_memory_manager is None


def test_torch_module_without_torch(monkeypatch):
    _absent(monkeypatch, "torch", "torch.cuda", "torch.cuda.memory")
    m = importlib.import_module("rmm.allocators.torch")
    assert m.rmm_torch_allocator is None
    assert m.allocator_library_path() == __import__("os").path.abspath(_ffi.__file__)


# ---- cupy, with a fake cupy --------------------------------------------------------------


def _fake_cupy():
    cupy = types.ModuleType("cupy")

    class UnownedMemory:
        def __init__(self, ptr, size, owner, device_id=-1):
            self.ptr, self.size, self.owner, self.device_id = ptr, size, owner, device_id

    class MemoryPointer:
        def __init__(self, mem, offset):
            self.mem, self.ptr = mem, mem.ptr + offset

    class FakeStream:
        ptr = 0

    cuda = types.SimpleNamespace(
        UnownedMemory=UnownedMemory,
        memory=types.SimpleNamespace(MemoryPointer=MemoryPointer),
        get_current_stream=lambda: FakeStream(),
        device=types.SimpleNamespace(get_device_id=lambda: 0),
    )
    cupy.cuda = cuda
    return cupy


def test_cupy_allocator_with_fake_cupy(monkeypatch):
    _absent(monkeypatch)
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy())
    m = importlib.import_module("rmm.allocators.cupy")
    with statistics():
        p = m.rmm_cupy_allocator(100)
        assert p.ptr != 0 and p.mem.size == 100 and p.mem.device_id == -1
        assert isinstance(p.mem.owner, rmm.DeviceBuffer)
        assert get_statistics().current_count == 1
        z = m.rmm_cupy_allocator(0)
        assert z.ptr == 0 and z.mem.device_id == 0
        del p, z
        assert get_statistics().current_count == 0


# ---- torch's C functions through ctypes ---------------------------------------------------


@pytest.fixture
def torch_fns():
    lib = ctypes.CDLL(_ffi.__file__)
    alloc = lib.rmm_torch_allocate
    alloc.restype = ctypes.c_void_p
    alloc.argtypes = [ctypes.c_ssize_t, ctypes.c_int, ctypes.c_void_p]
    free = lib.rmm_torch_deallocate
    free.restype = None
    free.argtypes = [ctypes.c_void_p, ctypes.c_ssize_t, ctypes.c_int, ctypes.c_void_p]
    return alloc, free


def test_torch_functions_use_the_per_device_resource(torch_fns):
    alloc, free = torch_fns
    with statistics():
        st = rmm.mr.get_current_device_resource()
        p = alloc(1000, 0, None)
        assert p
        assert st.allocation_counts.current_count == 1
        assert st.allocation_counts.current_bytes >= 1000
        q = alloc(24, 0, 2)  # cudaStreamPerThread
        assert q and q != p
        assert st.allocation_counts.current_count == 2
        free(p, 1000, 0, None)
        free(q, 24, 0, 2)
        s = st.allocation_counts
        assert (s.current_count, s.current_bytes, s.total_count) == (0, 0, 2)


def test_torch_functions_edge_cases(torch_fns):
    alloc, free = torch_fns
    with statistics():
        st = rmm.mr.get_current_device_resource()
        assert not alloc(-1, 0, None)  # negative size
        assert not alloc(16, 12345, None)  # no such device
        assert not alloc(0, 0, None)  # zero bytes: null, as the C ABI
        free(None, 16, 0, None)  # null: no-op
        assert st.allocation_counts.total_count == 0


def test_torch_functions_out_of_memory(torch_fns):
    alloc, _ = torch_fns
    lim = rmm.mr.LimitingResourceAdaptor(rmm.mr.CudaMemoryResource(), 1024)
    rmm.mr.set_current_device_resource(lim)
    assert not alloc(4096, 0, None)
    assert lim.get_allocated_bytes() == 0


def test_torch_functions_follow_a_resource_set_from_python(torch_fns):
    alloc, free = torch_fns
    pool = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), initial_pool_size=1 << 20)
    track = rmm.mr.TrackingResourceAdaptor(pool)
    rmm.mr.set_per_device_resource(0, track)
    p = alloc(256, 0, None)
    assert track.get_allocated_bytes() == 256
    free(p, 256, 0, None)
    assert track.get_allocated_bytes() == 0


# ---- rmm.allocators.torch's memory_stats & co. (counted by the two C functions) -------------


@pytest.fixture
def torch_mod(monkeypatch):
    """rmm.allocators.torch without PyTorch, its device-0 counters zeroed."""
    _absent(monkeypatch, "torch", "torch.cuda", "torch.cuda.memory")
    m = importlib.import_module("rmm.allocators.torch")
    # Earlier tests left their counts: start each test from zero (nothing is live).
    assert m.memory_allocated(0) == 0
    m.reset_peak_memory_stats(0)
    m.reset_accumulated_memory_stats(0)
    return m


TORCH_KEYS = [
    f"{what}.all.{which}"
    for what in ("active", "active_bytes", "allocated_bytes", "allocation", "requested_bytes")
    for which in ("allocated", "current", "freed", "peak")
] + ["num_ooms"]


def test_torch_memory_stats(torch_fns, torch_mod):
    alloc, free = torch_fns
    m = torch_mod
    s = m.memory_stats()
    assert list(s) == sorted(TORCH_KEYS)
    assert set(s.values()) == {0}
    p = alloc(1000, 0, None)
    q = alloc(3000, 0, 2)
    assert m.memory_allocated() == m.memory_allocated(0) == 4000
    assert m.max_memory_allocated() == 4000
    free(q, 3000, 0, 2)
    r = alloc(500, 0, None)
    s = m.memory_stats(0)
    assert s["allocated_bytes.all.current"] == 1500
    assert s["allocated_bytes.all.peak"] == 4000
    assert s["allocated_bytes.all.allocated"] == 4500
    assert s["allocated_bytes.all.freed"] == 3000
    assert s["allocation.all.current"] == 2
    assert s["allocation.all.peak"] == 2
    assert s["allocation.all.allocated"] == 3
    assert s["allocation.all.freed"] == 1
    assert s["num_ooms"] == 0
    for prefix in ("active_bytes", "requested_bytes"):
        for which in ("current", "peak", "allocated", "freed"):
            assert s[f"{prefix}.all.{which}"] == s[f"allocated_bytes.all.{which}"]
    for which in ("current", "peak", "allocated", "freed"):
        assert s[f"active.all.{which}"] == s[f"allocation.all.{which}"]

    m.reset_peak_memory_stats()
    assert m.max_memory_allocated() == 1500
    assert m.memory_stats()["allocation.all.peak"] == 2
    free(p, 1000, 0, None)
    free(r, 500, 0, None)
    s = m.memory_stats()
    assert (s["allocated_bytes.all.current"], s["allocated_bytes.all.peak"]) == (0, 1500)
    assert (s["allocated_bytes.all.allocated"], s["allocated_bytes.all.freed"]) == (4500, 4500)
    m.reset_accumulated_memory_stats()
    s = m.memory_stats()
    assert (s["allocated_bytes.all.allocated"], s["allocation.all.freed"]) == (0, 0)
    assert s["allocated_bytes.all.peak"] == 1500  # peaks stay


def test_torch_memory_stats_count_only_what_succeeded(torch_fns, torch_mod):
    alloc, free = torch_fns
    m = torch_mod
    assert not alloc(0, 0, None)
    assert not alloc(-5, 0, None)
    free(None, 16, 0, None)
    assert set(m.memory_stats().values()) == {0}
    lim = rmm.mr.LimitingResourceAdaptor(rmm.mr.CudaMemoryResource(), 1024)
    rmm.mr.set_current_device_resource(lim)
    assert not alloc(4096, 0, None)
    assert not alloc(4096, 0, None)
    s = m.memory_stats()
    assert s["num_ooms"] == 2
    assert s["allocation.all.allocated"] == 0
    m.reset_accumulated_memory_stats()
    assert m.memory_stats()["num_ooms"] == 0


def test_torch_memory_stats_follow_the_device(torch_fns, torch_mod):
    alloc, free = torch_fns
    m = torch_mod
    p = alloc(256, 0, None)
    # Device 1 has no allocations (and need not exist): its counters are its own.
    assert m.memory_allocated(1) == 0
    assert m.memory_allocated("cuda:0") == 256
    assert m.memory_allocated("cuda") == 256  # the current device (0)
    dev = types.SimpleNamespace(type="cuda", index=0)  # what a torch.device offers
    assert m.max_memory_allocated(dev) == 256
    assert m.memory_allocated(types.SimpleNamespace(type="cuda", index=None)) == 256
    free(p, 256, 0, None)
    for bad, exc in [
        ("cpu", ValueError),
        ("cuda:x", ValueError),
        (types.SimpleNamespace(type="cpu", index=None), ValueError),
        (-1, ValueError),
        (1000, ValueError),  # beyond the counted devices
        (1.0, TypeError),
        (True, TypeError),
    ]:
        with pytest.raises(exc):
            m.memory_stats(bad)


def test_torch_memory_stats_uses_torchs_current_device(torch_fns, torch_mod, monkeypatch):
    """With PyTorch imported, None and "cuda" mean torch.cuda.current_device()."""
    m = torch_mod
    fake = types.ModuleType("torch")
    fake.cuda = types.SimpleNamespace(is_available=lambda: True, current_device=lambda: 3)
    monkeypatch.setitem(sys.modules, "torch", fake)
    assert m._device_index(None) == 3
    assert m._device_index("cuda") == 3
    assert m._device_index("cuda:1") == 1


def test_torch_symbols_exported():
    lib = ctypes.CDLL(_ffi.__file__)
    assert hasattr(lib, "rmm_torch_allocate") and hasattr(lib, "rmm_torch_deallocate")


# ---- numba, with a fake of its EMM interface -----------------------------------------------


class _FakeCUdeviceptr:
    def __init__(self, v=0):
        self.v = v

    def __int__(self):
        return self.v


def _fake_numba(driver_attrs):
    numba = types.ModuleType("numba")
    cuda = types.ModuleType("numba.cuda")

    class HostOnlyCUDAMemoryManager:
        def __init__(self, context):
            self.context = context
            self.allocations = {}

        def reset(self):
            self.allocations.clear()

    class GetIpcHandleMixin:
        def get_ipc_handle(self, memory):
            return ("ipc", int(memory.handle) if not isinstance(memory.handle, ctypes.c_uint64) else memory.handle.value)

    class MemoryPointer:
        def __init__(self, context, pointer, size, owner=None, finalizer=None):
            self.context, self.device_pointer, self.size = context, pointer, size
            self.handle = pointer
            self.is_managed = finalizer is not None
            if finalizer is not None:
                self._finalizer = weakref.finalize(self, finalizer)

    driver = types.SimpleNamespace(**driver_attrs)
    cuda.HostOnlyCUDAMemoryManager = HostOnlyCUDAMemoryManager
    cuda.GetIpcHandleMixin = GetIpcHandleMixin
    cuda.MemoryPointer = MemoryPointer
    cuda.cudadrv = types.SimpleNamespace(driver=driver)
    numba.cuda = cuda
    return numba, cuda


@pytest.mark.parametrize(
    "driver_attrs, kind",
    [
        # numba-cuda (0.30): cuda-bindings only, no USE_NV_BINDING flag
        ({"binding": types.SimpleNamespace(CUdeviceptr=_FakeCUdeviceptr)}, _FakeCUdeviceptr),
        # older Numba configured for cuda-bindings
        (
            {"USE_NV_BINDING": True, "binding": types.SimpleNamespace(CUdeviceptr=_FakeCUdeviceptr)},
            _FakeCUdeviceptr,
        ),
        # older Numba on its ctypes binding
        ({"USE_NV_BINDING": False}, ctypes.c_uint64),
    ],
)
def test_numba_manager_with_fake_numba(monkeypatch, driver_attrs, kind):
    _absent(monkeypatch)
    numba, cuda = _fake_numba(driver_attrs)
    monkeypatch.setitem(sys.modules, "numba", numba)
    monkeypatch.setitem(sys.modules, "numba.cuda", cuda)
    m = importlib.import_module("rmm.allocators.numba")
    assert m._numba_memory_manager is m.RMMNumbaManager
    assert issubclass(m.RMMNumbaManager, cuda.HostOnlyCUDAMemoryManager)
    ctx = object()
    mgr = m.RMMNumbaManager(ctx)
    mgr.initialize()
    assert mgr.interface_version == 1
    with pytest.raises(NotImplementedError):
        mgr.get_memory_info()
    with statistics():
        st = rmm.mr.get_current_device_resource()
        p = mgr.memalloc(1000)
        assert isinstance(p.device_pointer, kind)
        addr = p.device_pointer.value if kind is ctypes.c_uint64 else int(p.device_pointer)
        assert addr != 0 and p.size == 1000 and p.context is ctx
        assert isinstance(mgr.allocations[addr], rmm.DeviceBuffer)
        assert mgr.allocations[addr].ptr == addr
        assert st.allocation_counts.current_count == 1
        assert mgr.get_ipc_handle(p) == ("ipc", addr)
        q = mgr.memalloc(8)
        assert len(mgr.allocations) == 2
        del p  # the finalizer frees the buffer
        assert st.allocation_counts.current_count == 1
        assert len(mgr.allocations) == 1
        mgr.reset()  # a context reset drops everything; a later finalizer is harmless
        assert st.allocation_counts.current_count == 0
        del q
        z = mgr.memalloc(0)  # zero bytes: a null pointer, nothing kept
        assert not mgr.allocations and not z.is_managed and int(z.device_pointer.value if kind is ctypes.c_uint64 else int(z.device_pointer)) == 0
        del z
        assert st.allocation_counts.current_count == 0


def test_numba_env_var_entry_point(monkeypatch):
    """NUMBA_CUDA_MEMORY_MANAGER=rmm.allocators.numba: Numba imports the module and takes
    its _numba_memory_manager."""
    _absent(monkeypatch)
    numba, cuda = _fake_numba({"binding": types.SimpleNamespace(CUdeviceptr=_FakeCUdeviceptr)})
    monkeypatch.setitem(sys.modules, "numba", numba)
    monkeypatch.setitem(sys.modules, "numba.cuda", cuda)
    mgr_cls = importlib.import_module("rmm.allocators.numba")._numba_memory_manager
    assert mgr_cls.__name__ == "RMMNumbaManager"
