"""Alias of ``rmm.pylibrmm.stream`` (RMM's older path)."""

from rmm.pylibrmm.stream import (  # noqa: F401
    DEFAULT_STREAM,
    LEGACY_DEFAULT_STREAM,
    PER_THREAD_DEFAULT_STREAM,
    Stream,
)
