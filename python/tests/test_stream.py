import pytest

from rmm.pylibrmm.stream import DEFAULT_STREAM, Stream


def test_new_stream_and_synchronize():
    s = Stream()
    assert s.handle != 0
    assert not s.is_default()
    s.synchronize()
    assert s.query() is True


def test_wrap_stream_and_int():
    s = Stream()
    t = Stream(s)
    assert t == s and t.handle == s.handle
    assert Stream(0) == DEFAULT_STREAM


def test_cupy_and_numba_like_objects():
    class CupyLike:
        ptr = 0

    class Handle:
        value = None

    class NumbaLike:
        handle = Handle()

    assert Stream(CupyLike()).is_default()
    assert Stream(NumbaLike()).is_default()


def test_bad_stream_arguments():
    with pytest.raises(TypeError):
        Stream("stream")
    with pytest.raises(ValueError):
        Stream(-1)
