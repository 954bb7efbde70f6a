"""rmm.statistics' memory history: record_memory_history, is_recording_memory_history,
dump_snapshot, memory_snapshot, and RMM_MEMORY_HISTORY=<path> (docs/memory-history.md)."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

import rmm
import rmm.mr
from rmm import _ffi
from rmm.statistics import (
    dump_snapshot,
    is_recording_memory_history,
    memory_snapshot,
    record_memory_history,
)

MiB = 1 << 20


@pytest.fixture(autouse=True)
def _stop_recording():
    """Each test starts and ends with recording off."""
    record_memory_history(enabled=False)
    yield
    record_memory_history(enabled=False)


@pytest.fixture
def pool():
    """A 1 MiB pool (growing up to 8 MiB) as the current device resource."""
    p = rmm.mr.PoolMemoryResource(
        rmm.mr.CudaMemoryResource(), initial_pool_size=MiB, maximum_pool_size=8 * MiB
    )
    rmm.mr.set_current_device_resource(p)
    return p


def _mine(doc, key, mr):
    """The entries of ``doc[key]`` of ``mr`` (events and segments name a resource by its
    identity, ``rmm_resource_id``)."""
    rid = _ffi.resource_id(mr._handle)
    return [e for e in doc[key] if e["resource_id"] == rid]


def test_on_off():
    assert not is_recording_memory_history()
    record_memory_history()
    assert is_recording_memory_history()
    record_memory_history(enabled=None)
    assert not is_recording_memory_history()
    record_memory_history(enabled="all")
    assert is_recording_memory_history()
    record_memory_history(False)
    assert not is_recording_memory_history()


def test_records_device_buffers_through_a_pool(pool):
    record_memory_history()
    a = rmm.DeviceBuffer(size=1000)
    b = rmm.DeviceBuffer(size=2 * MiB)  # more than the first chunk: the pool grows
    a_ptr, b_ptr = a.ptr, b.ptr
    del a
    doc = memory_snapshot()

    assert doc["schema_version"] >= 1
    assert doc["recording"] is True
    assert doc["producer"].startswith("rmm-rs")
    # The pool's own growth for b carries its id too: it comes before b's allocation.
    events = [e for e in _mine(doc, "events", pool) if e["action"] != "grow"]
    assert [(e["action"], e["size"], e["address"]) for e in events] == [
        ("allocate", 1000, a_ptr),
        ("allocate", 2 * MiB, b_ptr),
        ("free", 1000, a_ptr),
    ]
    grows = [e for e in _mine(doc, "events", pool) if e["action"] == "grow"]
    assert len(grows) == 1 and grows[0]["seq"] < events[1]["seq"]
    assert all(e["resource"] == "pool_memory_resource" for e in events)
    assert all(e["frames"] is None for e in events)  # no stacks asked for
    assert [e["seq"] for e in events] == sorted(e["seq"] for e in events)
    # The pool's growth for b is an event too.
    assert any(
        e["action"] == "grow" and e["resource"] == "pool_memory_resource" for e in doc["events"]
    )

    # Live: b only.
    live = _mine(doc, "live", pool)
    assert [(e["address"], e["size"]) for e in live] == [(b_ptr, 2 * MiB)]

    # The pool's chunks are segments; the one holding b is covered by its blocks.
    chunks = [s for s in doc["segments"] if s["kind"] == "pool_chunk"]
    assert chunks
    holding = [
        s for s in chunks if any(k["address"] == b_ptr for k in s["blocks"])
    ]
    assert len(holding) == 1
    seg = holding[0]
    assert sum(k["size"] for k in seg["blocks"]) == seg["size"]
    assert seg["free_bytes"] == sum(k["size"] for k in seg["blocks"] if k["state"] == "free")
    blocks = sorted(seg["blocks"], key=lambda k: k["address"])
    assert blocks[0]["address"] == seg["address"]
    for x, y in zip(blocks, blocks[1:]):
        assert x["address"] + x["size"] == y["address"]  # contiguous, no gaps
    b_block = next(k for k in seg["blocks"] if k["address"] == b_ptr)
    assert b_block["state"] != "free" and b_block["size"] >= 2 * MiB
    del b


def test_failed_allocation_is_an_event(pool):
    record_memory_history()
    with pytest.raises(MemoryError):
        rmm.DeviceBuffer(size=64 * MiB)  # over the pool's maximum
    events = _mine(memory_snapshot(), "events", pool)
    assert [(e["action"], e["size"]) for e in events] == [("allocate_failed", 64 * MiB)]


def test_stacks_give_native_frames(pool):
    record_memory_history(stacks=True)
    buf = rmm.DeviceBuffer(size=4096)
    doc = memory_snapshot()
    (event,) = [e for e in _mine(doc, "events", pool) if e["action"] == "allocate"]
    frames = event["frames"]
    assert isinstance(frames, list) and frames, event
    assert all("function" in f for f in frames)
    # Native frames only: the first is the C ABI call the extension made.
    assert frames[0]["function"].startswith("rmm_"), frames[0]
    del buf


def test_stacks_options():
    record_memory_history(stacks="all")
    assert is_recording_memory_history()
    record_memory_history(stacks=None)
    with pytest.raises(ValueError, match="Python frames"):
        record_memory_history(stacks="python")
    with pytest.raises(ValueError):
        record_memory_history(stacks="cpp")
    with pytest.raises(ValueError):
        record_memory_history(enabled="sometimes")


def test_max_entries_bounds_the_events(pool):
    record_memory_history(max_entries=5)
    bufs = [rmm.DeviceBuffer(size=256) for _ in range(10)]
    doc = memory_snapshot()
    assert len(doc["events"]) == 5
    assert doc["events_dropped"] >= 5
    # The newest are kept, and the live list is not bounded by max_entries.
    assert doc["events"][-1]["address"] == bufs[-1].ptr
    assert {b.ptr for b in bufs} <= {e["address"] for e in _mine(doc, "live", pool)}
    del bufs


def test_max_entries_checks():
    with pytest.raises(ValueError, match="at least one"):
        record_memory_history(max_entries=0)
    with pytest.raises(TypeError):
        record_memory_history(max_entries=1.5)
    with pytest.raises(TypeError):
        record_memory_history(max_entries=True)
    with pytest.raises(ValueError):
        _ffi.memory_history_enable(0, False)
    assert not is_recording_memory_history()
    record_memory_history(max_entries=sys.maxsize)  # PyTorch's default: unbounded
    assert is_recording_memory_history()


def test_state_keeps_live_allocations_only(pool):
    record_memory_history(enabled="state")
    bufs = [rmm.DeviceBuffer(size=512) for _ in range(4)]
    doc = memory_snapshot()
    assert len(doc["events"]) == 1
    assert len(_mine(doc, "live", pool)) == 4
    del bufs


def test_restart_and_stop_forget(pool):
    record_memory_history()
    buf = rmm.DeviceBuffer(size=100)
    record_memory_history()  # restarts
    assert _mine(memory_snapshot(), "events", pool) == []
    record_memory_history(enabled=False)
    doc = memory_snapshot()
    assert doc["recording"] is False
    assert doc["events"] == [] and doc["live"] == []
    # Segments are described without recording too.
    assert any(s["kind"] == "pool_chunk" for s in doc["segments"])
    del buf


def test_dump_snapshot_writes_json(pool, tmp_path):
    record_memory_history()
    buf = rmm.DeviceBuffer(size=3000)
    path = tmp_path / "snap.json"
    dump_snapshot(path)  # os.PathLike
    with open(path) as f:
        doc = json.load(f)
    assert [(e["action"], e["size"]) for e in _mine(doc, "events", pool)] == [
        ("allocate", 3000)
    ]
    dump_snapshot(str(tmp_path / "again.json"))  # str
    assert (tmp_path / "again.json").stat().st_size > 0
    del buf


def test_dump_snapshot_bad_path():
    with pytest.raises(ValueError, match="nonexistent-dir"):
        dump_snapshot("/nonexistent-dir/x.json")
    with pytest.raises(ValueError, match="NUL"):
        dump_snapshot("a\0b")


def test_memory_snapshot_leaves_no_file(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    memory_snapshot()
    assert list(tmp_path.iterdir()) == []


def _run(code, tmp_path, **env):
    full = dict(os.environ, RMM_RUNTIME=os.environ.get("RMM_RUNTIME", "host"), **env)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=str(tmp_path),
        env=full,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_env_writes_the_snapshot_at_exit(tmp_path):
    path = tmp_path / "at-exit.json"
    r = _run(
        """
        import rmm, rmm.mr
        from rmm.statistics import is_recording_memory_history
        pool = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), initial_pool_size=1 << 20)
        rmm.mr.set_current_device_resource(pool)
        assert is_recording_memory_history()
        # Never freed (a DeviceBuffer would be freed as the interpreter shuts down):
        keep = rmm._ffi.allocate(pool._handle, 12345)
        gone = rmm.DeviceBuffer(size=777)
        del gone
        print(keep)
        """,
        tmp_path,
        RMM_MEMORY_HISTORY=str(path),
    )
    assert r.returncode == 0, r.stderr
    keep_ptr = int(r.stdout.split()[-1])
    doc = json.loads(path.read_text())
    actions = [(e["action"], e["size"]) for e in doc["events"] if e["resource"] == "pool_memory_resource"]
    assert ("allocate", 12345) in actions
    assert ("allocate", 777) in actions and ("free", 777) in actions
    assert keep_ptr in [e["address"] for e in doc["live"]]


def test_env_writes_the_snapshot_after_out_of_memory(tmp_path):
    path = tmp_path / "oom.json"
    r = _run(
        """
        import json, os, sys
        import rmm, rmm.mr
        pool = rmm.mr.PoolMemoryResource(
            rmm.mr.CudaMemoryResource(), initial_pool_size=1 << 20, maximum_pool_size=2 << 20
        )
        rmm.mr.set_current_device_resource(pool)
        keep = rmm.DeviceBuffer(size=4096)
        try:
            rmm.DeviceBuffer(size=64 << 20)
        except MemoryError:
            pass
        else:
            sys.exit("no MemoryError")
        # Written at the failure, before exit:
        doc = json.load(open(os.environ["RMM_MEMORY_HISTORY"]))
        assert doc["events"][-1]["action"] == "allocate_failed", doc["events"][-1]
        assert doc["events"][-1]["size"] == 64 << 20
        os._exit(0)  # no exit handlers: the file is the one written at the failure
        """,
        tmp_path,
        RMM_MEMORY_HISTORY=str(path),
    )
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(path.read_text())
    assert any(e["action"] == "allocate" and e["size"] == 4096 for e in doc["events"])


def test_env_stacks_and_max_entries(tmp_path):
    path = tmp_path / "stacks.json"
    r = _run(
        """
        import rmm
        bufs = [rmm.DeviceBuffer(size=64) for _ in range(10)]
        """,
        tmp_path,
        RMM_MEMORY_HISTORY=str(path),
        RMM_MEMORY_HISTORY_STACKS="1",
        RMM_MEMORY_HISTORY_MAX_ENTRIES="3",
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(path.read_text())
    assert len(doc["events"]) == 3
    assert all(isinstance(e["frames"], list) and e["frames"] for e in doc["events"])
