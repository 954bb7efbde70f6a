"""Allocation statistics over a ``StatisticsResourceAdaptor`` (RMM 25.02's ``rmm.statistics``).

Statistics are "enabled" when the current device resource is a
``rmm.mr.StatisticsResourceAdaptor``: ``enable_statistics()`` wraps the current resource in
one, ``get/push/pop_statistics()`` read its counter frames, ``statistics()`` enables them for
a block, and ``profiler`` records per-function (or per-block) numbers into
``ProfilerRecords``.

The memory history (``record_memory_history``, ``dump_snapshot``, ``memory_snapshot``,
``is_recording_memory_history``) records every allocation and free made through librmm.so,
from Python, C and C++ alike, and writes snapshots as JSON (``docs/memory-history.md``).
"""

import inspect
import json
import os
import tempfile
import threading
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass
from functools import wraps
from typing import Any, Dict, Literal, Optional, Union

import rmm.mr
from rmm import _ffi, _generation

__all__ = [
    "ProfilerContext",
    "ProfilerRecords",
    "Statistics",
    "default_profiler_records",
    "dump_snapshot",
    "enable_statistics",
    "get_statistics",
    "is_recording_memory_history",
    "memory_snapshot",
    "pop_statistics",
    "profiler",
    "push_statistics",
    "record_memory_history",
    "statistics",
]


@dataclass
class Statistics:
    """Counters of a ``StatisticsResourceAdaptor`` frame.

    Attributes
    ----------
    current_bytes, current_count
        Bytes and allocations outstanding now (may be negative in a pushed frame that freed
        memory allocated below it).
    peak_bytes, peak_count
        Highest values of the two above.
    total_bytes, total_count
        Bytes and allocations allocated in all.
    """

    current_bytes: int
    current_count: int
    peak_bytes: int
    peak_count: int
    total_bytes: int
    total_count: int

    def __getitem__(self, key: str) -> int:
        """The counter named ``key``, as RMM's README reads it
        (``mr.allocation_counts["current_bytes"]``; Dask-CUDA does the same)."""
        if key not in self.__dataclass_fields__:
            raise KeyError(
                f"{key!r} is not a statistics counter; the counters are "
                + ", ".join(self.__dataclass_fields__)
            )
        return getattr(self, key)


def _stats_mr():
    """The current device resource if it is a statistics adaptor, else None."""
    current = rmm.mr.get_current_device_resource()
    if isinstance(current, rmm.mr.StatisticsResourceAdaptor):
        return current
    return None


def enable_statistics() -> None:
    """Enable allocation statistics: make the current device resource a
    ``StatisticsResourceAdaptor`` over the resource that was current.

    Idempotent: nothing happens when the current resource already is one. The adaptor must
    stay the current (topmost) resource while statistics are gathered.
    """
    current = rmm.mr.get_current_device_resource()
    if not isinstance(current, rmm.mr.StatisticsResourceAdaptor):
        rmm.mr.set_current_device_resource(rmm.mr.StatisticsResourceAdaptor(current))


def get_statistics() -> Optional[Statistics]:
    """The counters of the current statistics frame, or None when statistics are disabled."""
    mr = _stats_mr()
    return None if mr is None else mr.allocation_counts


def push_statistics() -> Optional[Statistics]:
    """Push a frame of zeroed counters; returns the counters of the frame below it (as they
    were before the push), or None (and does nothing) when statistics are disabled."""
    mr = _stats_mr()
    return None if mr is None else mr.push_counters()


def pop_statistics() -> Optional[Statistics]:
    """Pop the current frame of counters (its numbers are folded into the frame below) and
    return it, or None (and do nothing) when statistics are disabled."""
    mr = _stats_mr()
    return None if mr is None else mr.pop_counters()


@contextmanager
def statistics():
    """Context manager enabling allocation statistics inside its block.

    When statistics are already enabled, a frame of counters is pushed on entry and popped
    on exit. Otherwise a new ``StatisticsResourceAdaptor`` becomes the current resource on
    entry and the previous resource is restored on exit.

    Raises
    ------
    ValueError
        On exit, if the current device resource was changed inside the block.
    """
    previous = None
    if push_statistics() is None:
        previous = rmm.mr.get_current_device_resource()
        enable_statistics()
    inside = rmm.mr.get_current_device_resource()
    try:
        yield
    finally:
        if rmm.mr.get_current_device_resource() is not inside:
            raise ValueError(
                "RMM memory source stack was changed while in the statistics context"
            )
        if previous is None:
            pop_statistics()
        else:
            rmm.mr.set_current_device_resource(previous)


class ProfilerRecords:
    """Memory statistics gathered by ``profiler``, one record per name."""

    @dataclass
    class MemoryRecord:
        """Statistics of one function or code block.

        Attributes
        ----------
        num_calls
            Times the function or block ran.
        memory_total
            Bytes allocated in all its runs.
        memory_peak
            Highest peak of bytes allocated in one run.
        """

        num_calls: int = 0
        memory_total: int = 0
        memory_peak: int = 0

        def add(self, memory_total: int, memory_peak: int) -> None:
            """Account one more run."""
            self.num_calls += 1
            self.memory_total += memory_total
            self.memory_peak = max(self.memory_peak, memory_peak)

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records = defaultdict(ProfilerRecords.MemoryRecord)

    def add(self, name: str, data: Statistics) -> None:
        """Add the statistics of one run to the record ``name`` (thread-safe)."""
        with self._lock:
            self._records[name].add(memory_total=data.total_bytes, memory_peak=data.peak_bytes)

    @property
    def records(self) -> Dict[str, "ProfilerRecords.MemoryRecord"]:
        """A copy of the mapping from record names to their ``MemoryRecord``."""
        with self._lock:
            return dict(self._records)

    def report(
        self,
        ordered_by: Literal["num_calls", "memory_peak", "memory_total"] = "memory_peak",
    ) -> str:
        """The records as a table, sorted by ``ordered_by`` (largest first)."""
        if ordered_by not in ("num_calls", "memory_peak", "memory_total"):
            raise ValueError(f"cannot order by {ordered_by!r}")
        rows = sorted(
            self.records.items(), key=lambda item: getattr(item[1], ordered_by), reverse=True
        )
        lines = ["Memory Profiling", "================", ""]
        if not rows:
            lines.append("No data, maybe profiling wasn't enabled?")
            return "\n".join(lines)
        lines += [
            "Legends:",
            "  ncalls       - number of times the function or code block was called",
            "  memory_peak  - peak memory allocated in function or code block (in bytes)",
            "  memory_total - total memory allocated in function or code block (in bytes)",
            "",
            f"Ordered by: {ordered_by}",
            "",
            "ncalls     memory_peak    memory_total  filename:lineno(function)",
        ]
        for name, rec in rows:
            lines.append(f"{rec.num_calls:6,d} {rec.memory_peak:15,d} {rec.memory_total:15,d}  {name}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.records})"

    def __str__(self) -> str:
        return self.report()


def _get_descriptive_name_of_object(obj) -> str:
    """``file:line(qualname)`` of a function (unwrapping decorators). Unlike RMM, also for
    functions without source (``python -c``, the REPL): the code object's line."""
    obj = inspect.unwrap(obj)
    try:
        _, line = inspect.getsourcelines(obj)
    except (OSError, TypeError):
        line = getattr(getattr(obj, "__code__", None), "co_firstlineno", 0)
    return f"{inspect.getfile(obj)}:{line}({obj.__qualname__})"


default_profiler_records = ProfilerRecords()


class ProfilerContext:
    """What ``profiler(...)`` returns: a decorator and a context manager (a module-level
    name from RMM 26.06, the class of ``profiler()``'s objects in every generation)."""

    def __init__(self, records: ProfilerRecords, name: str) -> None:
        self._records = records
        self._name = name

    def __call__(self, func):
        name = self._name or _get_descriptive_name_of_object(func)
        records = self._records

        @wraps(func)
        def wrapper(*args, **kwargs):
            push_statistics()
            try:
                return func(*args, **kwargs)
            finally:
                stats = pop_statistics()
                if stats is not None:
                    records.add(name=name, data=stats)

        return wrapper

    def __enter__(self):
        if not self._name:
            raise ValueError("When profiler is used as a context manager, a name must be provided")
        push_statistics()
        return self

    def __exit__(self, *exc):
        stats = pop_statistics()
        if stats is not None:
            self._records.add(name=self._name, data=stats)
        return False


# The module's own name for it: the public one is gated (RMM 26.06 added it).
_ProfilerContext = ProfilerContext


def profiler(*, records: ProfilerRecords = default_profiler_records, name: str = ""):
    """Profile the memory of a function (as a decorator) or a block (as a context manager).

    While statistics are enabled, each call or block runs in its own pushed counter frame,
    and the frame's total and peak bytes are added to ``records`` under ``name``; with
    statistics disabled it does nothing.

    Parameters
    ----------
    records
        Where the numbers go (``default_profiler_records`` unless given).
    name
        The record's name; required for a context manager; for a decorator an empty name
        means ``file:line(qualname)`` of the function.
    """
    return _ProfilerContext(records, name)


# ---- memory history and snapshots ---------------------------------------------------------

#: Events kept by default (the C ABI's default too).
DEFAULT_MAX_ENTRIES = 100_000


def record_memory_history(
    enabled: Union[bool, str, None] = True,
    max_entries: int = DEFAULT_MAX_ENTRIES,
    stacks: Union[bool, str, None] = False,
) -> None:
    """Start or stop recording the memory history: every allocation, free and failed
    allocation made through librmm.so (from Python, C and C++; any resource), and the pools'
    growth and release, go into a bounded ring of events that ``dump_snapshot`` and
    ``memory_snapshot`` write out. Shaped after PyTorch's
    ``torch.cuda.memory._record_memory_history``.

    Starting while recording restarts: the events recorded so far are forgotten. Stopping
    forgets them too, so take the snapshot first. ``RMM_MEMORY_HISTORY=<path>`` in the
    environment records from the start of the process and writes the snapshot to ``path`` at
    exit and after an allocation runs out of memory.

    Parameters
    ----------
    enabled
        ``True`` or ``"all"``: record (the default). ``False`` or ``None``: stop.
        ``"state"`` (PyTorch's "live allocations only"): record with ``max_entries=1``, so the
        snapshot lists the live allocations and the segments but keeps no history.
    max_entries
        The most events kept (at least 1); the oldest go first. The live allocations a
        snapshot lists are not bounded by it.
    stacks
        ``True`` or ``"all"``: each event keeps its native host stack (C, C++ and Rust frames;
        symbols are resolved when a snapshot is written). Python frames are not recorded,
        so PyTorch's ``"python"`` is refused. ``False`` or ``None``: no stacks.

    Raises
    ------
    ValueError
        For an unknown ``enabled`` or ``stacks``, or ``max_entries`` below 1.
    TypeError
        If ``max_entries`` is not an int.
    """
    if enabled is False or enabled is None:
        _ffi.memory_history_disable()
        return
    if enabled is True or enabled == "all":
        pass
    elif enabled == "state":
        max_entries = 1
    else:
        raise ValueError(
            f"enabled={enabled!r}: expected True, False, None, 'all' or 'state'"
        )
    if stacks is True or stacks == "all":
        record_stacks = True
    elif stacks is False or stacks is None:
        record_stacks = False
    elif stacks == "python":
        raise ValueError(
            "stacks='python': Python frames are not recorded; stacks=True records the "
            "native (C, C++, Rust) frames"
        )
    else:
        raise ValueError(f"stacks={stacks!r}: expected True, False, None or 'all'")
    if isinstance(max_entries, bool) or not isinstance(max_entries, int):
        raise TypeError(f"max_entries must be an int, not {type(max_entries).__name__}")
    if max_entries < 1:
        raise ValueError(f"max_entries={max_entries}: keep at least one event")
    _ffi.memory_history_enable(max_entries, record_stacks)


def is_recording_memory_history() -> bool:
    """Whether the memory history is being recorded (by ``record_memory_history``, the C or
    C++ API, or ``RMM_MEMORY_HISTORY``)."""
    return _ffi.memory_history_is_enabled()


def dump_snapshot(path: Union[str, "os.PathLike[str]"]) -> None:
    """Write a memory snapshot to the file ``path`` (JSON, replacing the file).

    The snapshot holds the recorded events still in the ring (``events``; each with
    ``action``: allocate, free, allocate_failed, free_failed, grow or release, ``address``,
    ``size``, ``stream``, ``device``, ``resource``, ``thread`` and, with stacks, ``frames``),
    the allocations made while recording that are still live (``live``), and every
    resource's segments (pool chunks and the like, with ``blocks`` covering each). Without
    recording, only the segments. ``rmm-viz`` renders it as HTML. PyTorch's
    ``_dump_snapshot`` writes a pickle; this writes JSON.
    """
    _ffi.snapshot_write(os.fsdecode(os.fspath(path)))


def memory_snapshot() -> Dict[str, Any]:
    """The memory snapshot that ``dump_snapshot`` writes, as a dict (parsed JSON)."""
    with tempfile.TemporaryDirectory(prefix="rmm-snapshot-") as d:
        path = os.path.join(d, "snapshot.json")
        _ffi.snapshot_write(path)
        with open(path, encoding="utf-8") as f:
            return json.load(f)


_generation.gate(globals(), {"ProfilerContext": ("26.06", None)})
