"""Alias of ``rmm.pylibrmm.stream`` (RMM's older path, deprecated in RMM 25.02: importing
it warns, as RMM's does). RMM 26.06 removed it: absent for the API generations from 26.06."""

import warnings

from rmm import _generation

_generation.require_module(__name__, until="26.06")

from rmm.pylibrmm.stream import (  # noqa: E402, F401
    DEFAULT_STREAM,
    LEGACY_DEFAULT_STREAM,
    PER_THREAD_DEFAULT_STREAM,
    Stream,
)

__all__ = [
    "DEFAULT_STREAM",
    "LEGACY_DEFAULT_STREAM",
    "PER_THREAD_DEFAULT_STREAM",
    "Stream",
]

warnings.warn(
    "The `rmm._cuda.stream` module is deprecated in 25.02 and will be removed in a future "
    "release. Use `rmm.pylibrmm.stream` instead.",
    FutureWarning,
    stacklevel=2,
)
