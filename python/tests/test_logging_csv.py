"""LoggingResourceAdaptor writes RMM 25.02's CSV (logging_resource_adaptor.hpp): the header
``Thread,Time,Action,Pointer,Size,Stream``, then one row per allocate / free /
allocate failure with the thread id, ``HH:MM:SS.ffffff``, the pointer as ``%p``, the size in
bytes and the stream in hex (``0`` for the default stream)."""

import csv
import re
import threading

import pytest

import rmm.mr as mr
from rmm.pylibrmm.stream import Stream

HEADER = ["Thread", "Time", "Action", "Pointer", "Size", "Stream"]
TIME = re.compile(r"^\d\d:\d\d:\d\d\.\d{6}$")


def rows(adaptor):
    adaptor.flush()
    with open(adaptor.get_file_name(), newline="") as f:
        return list(csv.reader(f))


def pointer(text):
    return 0 if text in ("(nil)", "0", "0x0") else int(text, 16)


def test_header_and_rows(tmp_path):
    log = mr.LoggingResourceAdaptor(mr.CudaMemoryResource(), str(tmp_path / "log.csv"))
    stream = Stream()
    p = log.allocate(100)
    q = log.allocate(4096, stream)
    log.deallocate(p, 100)
    log.deallocate(q, 4096, stream)
    table = rows(log)
    assert table[0] == HEADER
    body = table[1:]
    assert [(r[2], pointer(r[3]), int(r[4])) for r in body] == [
        ("allocate", p, 100),
        ("allocate", q, 4096),
        ("free", p, 100),
        ("free", q, 4096),
    ]
    assert [r[5] for r in body] == ["0", hex(stream.handle), "0", hex(stream.handle)]
    for r in body:
        assert len(r) == len(HEADER)
        assert r[0].isdigit()
        assert TIME.match(r[1]), r[1]
    assert len({r[0] for r in body}) == 1


def test_allocation_failure_row(tmp_path):
    limited = mr.LimitingResourceAdaptor(mr.CudaMemoryResource(), 1 << 10)
    log = mr.LoggingResourceAdaptor(limited, str(tmp_path / "fail.csv"))
    with pytest.raises(MemoryError):
        log.allocate(1 << 20)
    table = rows(log)
    assert table[0] == HEADER
    (row,) = table[1:]
    assert row[2] == "allocate failure"
    assert pointer(row[3]) == 0
    assert int(row[4]) == 1 << 20


def test_rows_name_their_threads(tmp_path):
    log = mr.LoggingResourceAdaptor(mr.CudaMemoryResource(), str(tmp_path / "threads.csv"))

    def work():
        log.deallocate(log.allocate(256), 256)

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    work()
    body = rows(log)[1:]
    assert len(body) == 8
    assert len({r[0] for r in body}) == 4  # one id per thread
    for tid in {r[0] for r in body}:
        assert [r[2] for r in body if r[0] == tid] == ["allocate", "free"]


def test_device_buffer_rows(tmp_path):
    import rmm

    log = mr.LoggingResourceAdaptor(mr.CudaMemoryResource(), str(tmp_path / "buf.csv"))
    buf = rmm.DeviceBuffer(size=12345, mr=log)
    ptr = buf.ptr
    del buf
    body = rows(log)[1:]
    # A DeviceBuffer asks for its exact size, as RMM 26.06's does.
    assert [(r[2], pointer(r[3]), int(r[4])) for r in body] == [
        ("allocate", ptr, 12345),
        ("free", ptr, 12345),
    ]
