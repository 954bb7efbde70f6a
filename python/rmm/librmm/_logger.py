"""RMM's ``rmm.librmm._logger``: the C++ logger's ``level_enum``."""

from rmm.pylibrmm.logger import level_enum

__all__ = ["level_enum"]
