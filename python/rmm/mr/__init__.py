"""Memory resources and the per-device registry (RMM's ``rmm.mr``; a package with
``rmm.mr.experimental`` as in RMM 26.06).

Every public name of ``rmm.pylibrmm.memory_resource`` is re-exported here, as RMM's
``rmm.mr`` re-exports that module's names, with ``rmm.mr.experimental`` in place of
``rmm.pylibrmm.memory_resource.experimental`` and the registry's two private helpers that
RMM 25.02's ``rmm.mr`` exported.
"""

from rmm.pylibrmm.memory_resource import *  # noqa: F403
from rmm.pylibrmm.memory_resource import __all__ as _names
from rmm.pylibrmm.memory_resource import _flush_logs, _initialize

# The * import brought rmm.pylibrmm.memory_resource.experimental: this package's own
# submodule takes its place (`from rmm.mr import ...` imports it only while the name is free).
del experimental  # noqa: F821
from rmm.mr import experimental  # noqa: E402

__all__ = sorted([*_names, "_flush_logs", "_initialize"])
del _names
