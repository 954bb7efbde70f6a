import pytest

import rmm
import rmm.mr as mr
from rmm.pylibrmm.helper import parse_bytes


@pytest.mark.parametrize(
    "text,value",
    [
        ("1GiB", 1 << 30),
        ("1 GiB", 1 << 30),
        ("2mib", 2 << 20),
        ("1.5KiB", 1536),
        ("1kB", 1000),
        ("1MB", 10**6),
        ("256", 256),
        ("256B", 256),
        (4096, 4096),
    ],
)
def test_parse_bytes(text, value):
    assert parse_bytes(text) == value


@pytest.mark.parametrize("text", ["", "GiB", "1 gigabyte", "1XiB", "-1MiB", "1..2"])
def test_parse_bytes_rejects(text):
    with pytest.raises(ValueError, match="byte specification"):
        parse_bytes(text)


def test_reinitialize_default():
    rmm.reinitialize()
    assert type(mr.get_current_device_resource()) is mr.CudaMemoryResource
    assert rmm.is_initialized()


def test_reinitialize_pool_with_strings():
    rmm.reinitialize(pool_allocator=True, initial_pool_size="2MiB", maximum_pool_size="8MiB")
    pool = mr.get_current_device_resource()
    assert isinstance(pool, mr.PoolMemoryResource)
    assert pool.pool_size() == 2 << 20
    b = rmm.DeviceBuffer(size=4 << 20)
    assert b.mr is pool
    with pytest.raises(MemoryError):
        rmm.DeviceBuffer(size=16 << 20)


def test_reinitialize_managed_pool():
    rmm.reinitialize(pool_allocator=True, managed_memory=True, initial_pool_size=1 << 20)
    pool = mr.get_current_device_resource()
    assert isinstance(pool.get_upstream(), mr.ManagedMemoryResource)


def test_reinitialize_logging(tmp_path):
    rmm.reinitialize(logging=True, log_file_name=str(tmp_path / "rmm.csv"))
    assert type(mr.get_current_device_resource()) is mr.LoggingResourceAdaptor
    names = rmm.get_log_filenames()
    assert names[0].endswith("rmm.dev0.csv")
    rmm.DeviceBuffer(size=10)
    mr._flush_logs()
    assert "allocate" in open(names[0]).read()


def test_reinitialize_bad_sizes():
    with pytest.raises(ValueError, match="byte specification"):
        rmm.reinitialize(pool_allocator=True, initial_pool_size="lots")
    with pytest.raises(OverflowError):
        rmm.reinitialize(pool_allocator=True, initial_pool_size=-1)
    with pytest.raises(TypeError):
        rmm.reinitialize(pool_allocator=True, initial_pool_size=1.5)


def test_reinitialize_hooks():
    order = []
    f = rmm.register_reinitialize_hook(lambda: order.append("first"))
    g = rmm.register_reinitialize_hook(lambda x, y=0: order.append(("second", x, y)), 1, y=2)
    try:
        rmm.reinitialize()
        assert order == [("second", 1, 2), "first"]
    finally:
        rmm.unregister_reinitialize_hook(f)
        rmm.unregister_reinitialize_hook(g)
    order.clear()
    rmm.reinitialize()
    assert order == []
