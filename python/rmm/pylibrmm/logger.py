"""RMM's debug logger controls, over librmm.so's debug log."""

from enum import IntEnum

from rmm import _ffi


class level_enum(IntEnum):
    """Debug log levels (RMM's ``level_enum``)."""

    trace = 0
    debug = 1
    info = 2
    warn = 3
    error = 4
    critical = 5
    off = 6
    n_levels = 7


def _level(level):
    if isinstance(level, bool) or not isinstance(level, int):
        raise TypeError(f"level must be a level_enum, not {type(level).__name__}")
    level = int(level)
    if not 0 <= level <= 6:
        raise ValueError(f"level must be between trace (0) and off (6), got {level}")
    return level


_flush_level = level_enum.warn


def set_logging_level(level):
    """Log messages of ``level`` and above."""
    _ffi.set_debug_log_level(_level(level))


def get_logging_level():
    """The current logging level."""
    return level_enum(_ffi.get_debug_log_level())


def should_log(level):
    """Whether a message of ``level`` would be logged."""
    return _level(level) >= _ffi.get_debug_log_level()


def flush_logger():
    """Flush the debug log."""
    _ffi.debug_log_flush()


def set_flush_level(level):
    """Set the level from which messages should be flushed at once.

    Recorded only (``get_flush_level`` returns it): librmm.so's debug log has no flush level,
    it writes every message out as it is logged."""
    global _flush_level
    _flush_level = level_enum(_level(level))


def get_flush_level():
    """The flush level."""
    return _flush_level
