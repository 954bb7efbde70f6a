"""Memory resources and the per-device registry (RMM's ``rmm.mr``; a package with
``rmm.mr.experimental`` as in RMM 26.06).

Every public name of ``rmm.pylibrmm.memory_resource`` is re-exported here, as RMM's
``rmm.mr`` re-exports that module's names, with ``rmm.mr.experimental`` in place of
``rmm.pylibrmm.memory_resource.experimental`` and the registry's two private helpers that
RMM 25.02's ``rmm.mr`` exported. The names follow the API generation in force, as that
module's do.
"""

from rmm import _generation
from rmm.pylibrmm import memory_resource as _pmr
from rmm.pylibrmm.memory_resource import *  # noqa: F403
from rmm.pylibrmm.memory_resource import _flush_logs, _initialize  # noqa: F401

# The * import took the names of the generation in force; the gated ones (and this package's
# own submodule `experimental`) are handed out by __getattr__ below, for whichever
# generation is in force when they are asked for.
for _name in _pmr._GATED:
    globals().pop(_name, None)

# Every generation's names; __getattr__("__all__") gives those of the generation in force.
__all__ = sorted({*_pmr._gate.all, "_flush_logs", "_initialize"})

_generation.gate(
    globals(),
    _pmr._GATED,
    lazy={
        name: "" if name == "experimental" else "rmm.pylibrmm.memory_resource"
        for name in _pmr._GATED
    },
)
del _name
