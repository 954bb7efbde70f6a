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
    # RMM's functions take level_enum members only: a plain int is a TypeError there too.
    if not isinstance(level, level_enum):
        raise TypeError(
            f"level must be an instance of the level_enum enum, not {type(level).__name__}"
        )
    return level


# Whether the level was set to n_levels: librmm.so's log takes at most off, which logs the
# same (nothing), but RMM's logger gives n_levels back.
_past_off = False


def set_logging_level(level):
    """Log messages of ``level`` and above."""
    global _past_off
    level = _level(level)
    _ffi.set_debug_log_level(min(level, level_enum.off))
    _past_off = level > level_enum.off


def get_logging_level():
    """The current logging level."""
    current = level_enum(_ffi.get_debug_log_level())
    if _past_off and current == level_enum.off:
        return level_enum.n_levels
    return current


def should_log(level):
    """Whether a message of ``level`` would be logged."""
    level = _level(level)
    return level < level_enum.off and level >= _ffi.get_debug_log_level()


def flush_logger():
    """Flush the debug log."""
    _ffi.debug_log_flush()


def set_flush_level(level):
    """Set the level from which messages should be flushed at once.

    Recorded only (``get_flush_level`` returns it): librmm.so's debug log has no flush level,
    it writes every message out as it is logged."""
    global _flush_level
    _flush_level = _level(level)


def get_flush_level():
    """The flush level."""
    return _flush_level
