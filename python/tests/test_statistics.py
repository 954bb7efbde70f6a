"""rmm.statistics: enable/get/push/pop_statistics, statistics(), profiler, ProfilerRecords."""

import threading

import pytest

import rmm
import rmm.mr
from rmm.statistics import (
    ProfilerRecords,
    Statistics,
    _get_descriptive_name_of_object,
    default_profiler_records,
    enable_statistics,
    get_statistics,
    pop_statistics,
    profiler,
    push_statistics,
    statistics,
)


def counts(s):
    return (
        s.current_bytes,
        s.current_count,
        s.peak_bytes,
        s.peak_count,
        s.total_bytes,
        s.total_count,
    )


@pytest.fixture
def stats_mr():
    with statistics():
        yield rmm.mr.get_current_device_resource()


def test_disabled_is_noop():
    assert get_statistics() is None
    assert push_statistics() is None
    assert pop_statistics() is None
    assert get_statistics() is None
    assert not isinstance(rmm.mr.get_current_device_resource(), rmm.mr.StatisticsResourceAdaptor)


def test_enable_statistics_wraps_current_and_is_idempotent():
    base = rmm.mr.get_current_device_resource()
    enable_statistics()
    st = rmm.mr.get_current_device_resource()
    assert isinstance(st, rmm.mr.StatisticsResourceAdaptor)
    assert st.get_upstream() is base
    enable_statistics()
    assert rmm.mr.get_current_device_resource() is st
    b = rmm.DeviceBuffer(size=100)
    assert isinstance(get_statistics(), Statistics)
    assert get_statistics().current_count == 1
    del b
    assert get_statistics().current_count == 0


def test_context_nested_and_restored():
    mr0 = rmm.mr.get_current_device_resource()
    assert get_statistics() is None
    with statistics():
        mr1 = rmm.mr.get_current_device_resource()
        assert isinstance(mr1, rmm.mr.StatisticsResourceAdaptor)
        b1 = rmm.DeviceBuffer(size=20)
        s1 = get_statistics()
        assert s1.current_count == 1 and s1.total_count == 1
        one = s1.current_bytes
        assert one >= 20
        assert counts(s1) == (one, 1, one, 1, one, 1)
        with statistics():
            assert rmm.mr.get_current_device_resource() is mr1
            b2 = rmm.DeviceBuffer(size=10)
            s2 = get_statistics()
            two = s2.current_bytes
            assert two >= 10
            assert counts(s2) == (two, 1, two, 1, two, 1)
        s = get_statistics()
        both = one + two
        assert counts(s) == (both, 2, both, 2, both, 2)
        del b1, b2
        assert get_statistics().current_bytes == 0
    assert rmm.mr.get_current_device_resource() is mr0
    assert get_statistics() is None


def test_context_restores_on_exception():
    mr0 = rmm.mr.get_current_device_resource()
    with pytest.raises(KeyError):
        with statistics():
            raise KeyError("x")
    assert rmm.mr.get_current_device_resource() is mr0


def test_context_detects_changed_resource():
    with pytest.raises(ValueError, match="changed while in the statistics context"):
        with statistics():
            rmm.mr.set_current_device_resource(rmm.mr.CudaMemoryResource())


def test_current_statistics_push_pop(stats_mr):
    b1 = rmm.DeviceBuffer(size=16)
    assert counts(get_statistics()) == (16, 1, 16, 1, 16, 1)
    b2 = rmm.DeviceBuffer(size=32)
    # push returns the frame below, before the push
    assert counts(push_statistics()) == (48, 2, 48, 2, 48, 2)
    assert counts(get_statistics()) == (0, 0, 0, 0, 0, 0)
    del b1
    # pop returns the popped frame: freeing memory from below makes it negative
    assert counts(pop_statistics()) == (-16, -1, 0, 0, 0, 0)
    del b2
    assert counts(get_statistics()) == (0, 0, 48, 2, 48, 2)


def test_counter_stack_on_adaptor(stats_mr):
    buffers = [rmm.DeviceBuffer(size=16) for _ in range(10)]
    assert counts(stats_mr.push_counters()) == (160, 10, 160, 10, 160, 10)
    b1 = rmm.DeviceBuffer(size=16)
    assert counts(stats_mr.push_counters()) == (16, 1, 16, 1, 16, 1)
    del b1
    assert counts(stats_mr.pop_counters()) == (-16, -1, 0, 0, 0, 0)
    b1 = rmm.DeviceBuffer(size=16)
    assert counts(stats_mr.push_counters()) == (16, 1, 16, 1, 32, 2)
    b2 = rmm.DeviceBuffer(size=16)
    assert counts(stats_mr.pop_counters()) == (16, 1, 16, 1, 16, 1)
    assert counts(stats_mr.pop_counters()) == (32, 2, 32, 2, 48, 3)
    del b1, b2
    assert counts(stats_mr.allocation_counts) == (160, 10, 192, 12, 208, 13)
    del buffers
    with pytest.raises(IndexError):
        stats_mr.pop_counters()


def test_two_statistics_adaptors(stats_mr):
    buffers = [rmm.DeviceBuffer(size=1008) for _ in range(10)]
    for i in range(9, 0, -2):
        del buffers[i]
    assert counts(stats_mr.allocation_counts) == (5040, 5, 10080, 10, 10080, 10)
    mr2 = rmm.mr.StatisticsResourceAdaptor(stats_mr)
    rmm.mr.set_current_device_resource(mr2)
    try:
        buffers += [rmm.DeviceBuffer(size=1008) for _ in range(2)]
        assert counts(mr2.allocation_counts) == (2016, 2, 2016, 2, 2016, 2)
        assert counts(stats_mr.allocation_counts) == (7056, 7, 10080, 10, 12096, 12)
        del buffers
        assert counts(mr2.allocation_counts) == (0, 0, 2016, 2, 2016, 2)
        assert counts(stats_mr.allocation_counts) == (0, 0, 10080, 10, 12096, 12)
    finally:
        rmm.mr.set_current_device_resource(stats_mr)


def test_profiler_records(stats_mr):
    records = ProfilerRecords()
    assert records.records == {}
    assert "No data" in records.report()

    @profiler(records=records)
    def f1():
        a = rmm.DeviceBuffer(size=16)
        b = rmm.DeviceBuffer(size=16)
        del a
        return b

    keep1, keep2 = f1(), f1()

    @profiler(records=records)
    def f2():
        a = rmm.DeviceBuffer(size=16)

        @profiler(records=records, name="g2")
        def g2(a):
            b = rmm.DeviceBuffer(size=16)
            del a
            return b

        return g2(a)

    f2()
    f2()
    del keep1, keep2
    f2()

    @profiler(records=records)
    def f3():
        return [rmm.DeviceBuffer(size=112) for _ in range(100)]

    f3()
    r = records.records
    rec = ProfilerRecords.MemoryRecord
    assert r[_get_descriptive_name_of_object(f1)] == rec(num_calls=2, memory_total=64, memory_peak=32)
    assert r[_get_descriptive_name_of_object(f2)] == rec(num_calls=3, memory_total=96, memory_peak=32)
    assert r["g2"] == rec(num_calls=3, memory_total=48, memory_peak=16)
    assert r[_get_descriptive_name_of_object(f3)] == rec(
        num_calls=1, memory_total=11200, memory_peak=11200
    )

    report = records.report()
    lines = report.splitlines()
    assert lines[0] == "Memory Profiling"
    assert "Ordered by: memory_peak" in report
    assert "ncalls     memory_peak    memory_total  filename:lineno(function)" in lines
    assert lines[-4].endswith(_get_descriptive_name_of_object(f3))  # largest peak first
    assert "11,200" in lines[-4]
    assert not report.endswith("\n")
    by_calls = records.report(ordered_by="num_calls").splitlines()
    assert by_calls[-1].endswith(_get_descriptive_name_of_object(f3))
    assert str(records) == report
    assert repr(records).startswith("ProfilerRecords({")
    with pytest.raises(ValueError):
        records.report(ordered_by="nope")


def test_profiler_default_records_and_context(stats_mr):
    @profiler()
    def f4():
        return [rmm.DeviceBuffer(size=16) for _ in range(10)]

    f4()
    with profiler(name="b1 and b2"):
        b1 = rmm.DeviceBuffer(size=128)
        b2 = rmm.DeviceBuffer(size=128)
        with profiler(name="del b1 and b2"):
            del b1, b2
    r = default_profiler_records.records
    rec = ProfilerRecords.MemoryRecord
    assert r[_get_descriptive_name_of_object(f4)] == rec(num_calls=1, memory_total=160, memory_peak=160)
    assert r["b1 and b2"].memory_total == 256
    assert r["b1 and b2"].memory_peak == 256
    assert r["del b1 and b2"] == rec(num_calls=1, memory_total=0, memory_peak=0)


def test_profiler_context_needs_a_name():
    with pytest.raises(ValueError, match="a name must be provided"):
        with profiler():
            pass


def test_profiler_disabled_records_nothing():
    records = ProfilerRecords()

    @profiler(records=records)
    def f():
        return rmm.DeviceBuffer(size=8)

    f()
    with profiler(records=records, name="block"):
        rmm.DeviceBuffer(size=8)
    assert records.records == {}


def test_profiler_keeps_function_metadata_and_exceptions(stats_mr):
    records = ProfilerRecords()

    @profiler(records=records, name="boom")
    def boom(x):
        """doc"""
        rmm.DeviceBuffer(size=16)
        raise RuntimeError(x)

    assert boom.__name__ == "boom" and boom.__doc__ == "doc"
    with pytest.raises(RuntimeError, match="bang"):
        boom("bang")
    assert records.records["boom"].num_calls == 1
    assert get_statistics() is not None  # the frame was popped: the fixture's pop works


def test_profiler_records_add_is_thread_safe():
    records = ProfilerRecords()
    s = Statistics(0, 0, 5, 1, 7, 1)

    def work():
        for _ in range(1000):
            records.add("x", s)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert records.records["x"] == ProfilerRecords.MemoryRecord(4000, 28000, 5)


def test_profiler_on_a_function_without_source(stats_mr):
    # python -c, the REPL, exec: inspect finds no source; the name uses the code's line
    namespace = {"rmm": rmm}
    exec(compile("def made():\n    return rmm.DeviceBuffer(size=32)\n", "<made>", "exec"), namespace)
    records = ProfilerRecords()
    profiled = profiler(records=records)(namespace["made"])
    profiled()
    assert list(records.records) == ["<made>:1(made)"]
    assert records.records["<made>:1(made)"].num_calls == 1


def test_allocation_counts_by_key_as_rmms_readme_reads_them():
    mr = rmm.mr.StatisticsResourceAdaptor(rmm.mr.CudaMemoryResource())
    buf = rmm.DeviceBuffer(size=1000, mr=mr)
    counts = mr.allocation_counts
    assert counts["current_bytes"] == counts.current_bytes == 1000
    assert counts["current_count"] == 1
    assert counts["peak_bytes"] == counts.peak_bytes
    assert counts["total_count"] == counts.total_count
    with pytest.raises(KeyError, match="current_bytes, current_count"):
        counts["bytes"]
    del buf
