"""The RMM API generation the package serves in this process.

One package serves the Python API of RMM 25.02, 25.10, 26.06, 26.08 and 26.10. Where those
releases differ (a name one has and another lacks, a size one rounds and another does not),
the process follows one generation: ``RMM_API_VERSION`` in the environment when ``rmm`` is
imported, else the newest; ``rmm.set_api_version()`` may change it until the first
allocation. ``rmm.api_version()`` names the one in force. Releases between two generations
map to the generation whose API they have, as ``rmm/version_config.hpp`` maps them for C++.

Modules whose names differ between generations hand them out through ``gate`` (a module
``__getattr__``); modules that only some generations have call ``require_module`` first.
"""

import importlib
import os
import re

from rmm import _ffi
from rmm._version import SUPPORTED_API_VERSIONS

#: The API generations, oldest first.
GENERATIONS = SUPPORTED_API_VERSIONS

#: Each RMM release -> the generation whose Python API it has.
RELEASES = {
    "25.02": "25.02",
    "25.04": "25.10",
    "25.06": "25.10",
    "25.08": "25.10",
    "25.10": "25.10",
    "25.12": "26.06",
    "26.02": "26.06",
    "26.04": "26.06",
    "26.06": "26.06",
    "26.08": "26.08",
    "26.10": "26.10",
}

_ACCEPTED = (
    "25.02, 25.10, 26.06, 26.08 or 26.10, or a release between them (25.04 to 25.08 select "
    "25.10, 25.12 to 26.04 select 26.06), written YY.MM, YY.MM.PP or YYMM (25.10, 25.10.00, "
    "2510)"
)

_FORM = re.compile(r"^(\d\d)\.?(\d\d)(?:\.\d+)?$")

# The generation in force, as "YY.MM" and as the number YYMM (set below, at import).
_selected = GENERATIONS[-1]
_number = 0

#: Bytes a DeviceBuffer's size is rounded up to a multiple of when its resource is asked.
#: RMM 25.02 and 25.10 allocated DeviceBuffers through a C++ resource reference that aligned
#: the size to 16 bytes (its statistics count 32 for a buffer of 20); 26.06 asks for the
#: exact size.
buffer_rounding = 1

#: True once this process allocated through the package (a DeviceBuffer, a resource's
#: ``allocate``): from then on the generation stays.
allocated = False


def _yymm(generation):
    return int(generation.replace(".", ""))


def parse(value, what=None):
    """The generation (``"YY.MM"``) that the release ``value`` (``"25.10"``, ``"2510"``,
    ``"25.10.00"`` or the int 2510) selects; ``ValueError`` naming the accepted values
    otherwise. ``what`` names the caller in the message (default: the environment
    variable)."""
    where = f"RMM_API_VERSION={value!r}" if what is None else f"{what}({value!r}):"
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise TypeError(
            f"{where} the version must be a string such as '26.10' (or the int 2610), "
            f"not {type(value).__name__}"
        )
    match = _FORM.match(str(value).strip())
    release = f"{match.group(1)}.{match.group(2)}" if match else None
    if release not in RELEASES:
        raise ValueError(
            f"{where} {'is ' if what is None else ''}not an RMM release this package "
            f"serves: use {_ACCEPTED}"
        )
    return RELEASES[release]


def _select(generation):
    global _selected, _number, buffer_rounding
    number = _yymm(generation)
    # rmm_torch_allocator: RMM 25.x's asked the resource for the size rounded up to
    # CUDA_ALLOCATION_ALIGNMENT (256) through the same kind of reference; 26.06 does not.
    _ffi.torch_set_alignment(256 if number <= 2510 else 1)
    _selected, _number = generation, number
    buffer_rounding = 16 if number <= 2510 else 1
    for g in _gates:
        g.refresh()


def api_version():
    """The RMM API generation this process follows, as ``"YY.MM"`` (``"26.10"`` unless
    ``RMM_API_VERSION`` or ``set_api_version`` chose another): one of
    ``rmm._version.SUPPORTED_API_VERSIONS``."""
    return _selected


def set_api_version(version):
    """Follow RMM ``version``'s Python API from now on (names, and how DeviceBuffer sizes
    reach resources): ``"25.02"``, ``"25.10"``, ``"26.06"``, ``"26.08"``, ``"26.10"``, a
    release between them (``"25.06"`` selects 25.10), as ``"YY.MM"`` or ``"YYMM"``.

    Call it right after ``import rmm``, before the first allocation; afterwards only the
    generation already in force is accepted and any other raises ``RuntimeError``. An
    unknown version raises ``ValueError`` naming the accepted ones. ``RMM_API_VERSION`` in
    the environment selects the same way at import.
    """
    generation = parse(version, "rmm.set_api_version")
    if generation == _selected:
        return
    if allocated:
        raise RuntimeError(
            f"rmm.set_api_version({version!r}): the API generation can only change before "
            f"the first allocation, and this process has allocated under {_selected} "
            f"already; select {generation} at start-up with RMM_API_VERSION={generation}"
        )
    try:
        _select(generation)
    except RuntimeError as e:  # the PyTorch allocator has allocated already
        raise RuntimeError(f"rmm.set_api_version({version!r}): {e}") from None


def available(since=None, until=None):
    """Whether the generation in force has a name that RMM ``since`` added (None: always
    had) and RMM ``until`` removed (None: still has)."""
    return (since is None or _number >= _yymm(since)) and (until is None or _number < _yymm(until))


def _why_absent(since, until):
    if until is not None and _number >= _yymm(until):
        return (
            f"RMM {until} removed it and API generation {_selected} is selected "
            f"(rmm.api_version(); RMM_API_VERSION older than {until} has it)"
        )
    return (
        f"RMM {since} added it and API generation {_selected} is selected "
        f"(rmm.api_version(); RMM_API_VERSION={since} or newer has it)"
    )


def require_module(name, since=None, until=None):
    """Raise ``ModuleNotFoundError`` unless the generation in force has the module ``name``
    (RMM ``since`` added it, ``until`` removed it); called first thing in such a module."""
    if not available(since, until):
        raise ModuleNotFoundError(
            f"No module named {name!r}: {_why_absent(since, until)}", name=name
        )


class _Gate:
    """The names of one module that only some generations have."""

    def __init__(self, namespace, table, lazy):
        self.namespace = namespace
        self.module = namespace["__name__"]
        self.table = table
        self.lazy = lazy
        self.values = {}
        self.all = namespace.pop("__all__", None)
        self.fallback = namespace.get("__getattr__")
        self.refresh()

    def refresh(self):
        # Values of names the generation lacks leave the module's namespace (a submodule
        # imported under another generation included); __getattr__ hands out the others.
        for name in self.table:
            if name in self.namespace and not available(*self.table[name]):
                self.values[name] = self.namespace.pop(name)

    def getattr(self, name):
        if name in self.table:
            since, until = self.table[name]
            if not available(since, until):
                raise AttributeError(
                    f"module {self.module!r} has no attribute {name!r}: "
                    f"{_why_absent(since, until)}"
                )
            if name not in self.values:
                source = self.lazy.get(name)
                if source is None:  # a submodule not imported yet
                    raise AttributeError(f"module {self.module!r} has no attribute {name!r}")
                if source:
                    self.values[name] = getattr(importlib.import_module(source), name)
                else:  # a submodule the package imports with itself in that generation
                    self.values[name] = importlib.import_module(f"{self.module}.{name}")
            return self.values[name]
        if name == "__all__" and self.all is not None:
            return [n for n in self.all if n not in self.table or available(*self.table[n])]
        if self.fallback is not None:
            return self.fallback(name)
        raise AttributeError(f"module {self.module!r} has no attribute {name!r}")

    def dir(self):
        names = set(self.namespace) | {n for n in self.table if available(*self.table[n])}
        if self.all is not None:
            names.add("__all__")
        return sorted(names)


_gates = []


def gate(namespace, table, lazy=None):
    """Make the names of ``table`` (``{name: (since, until)}``: the RMM release that added
    the name, None if every generation has it; the release that removed it, None if the
    newest has it) follow the generation in force in the module whose globals are
    ``namespace``. Their values move out of the namespace; the module's ``__getattr__``
    hands them out or raises ``AttributeError`` saying which release added or removed
    them, ``__dir__`` and ``__all__`` list the ones in force. ``lazy`` gives the names
    whose values are not in the namespace, taken on first use: ``{name: module path}`` for
    an attribute of that module, ``{name: ""}`` for a submodule the package has as an
    attribute from import in the generations that have it; a gated submodule not in
    ``lazy`` is an attribute once imported (``require_module`` refuses the import in the
    other generations). A ``__getattr__`` the module had is asked for other names."""
    g = _Gate(namespace, table, lazy or {})
    _gates.append(g)
    namespace["__getattr__"] = g.getattr
    namespace["__dir__"] = g.dir
    return g


def _from_environment():
    value = os.environ.get("RMM_API_VERSION", "").strip()
    if value:
        _select(parse(value))
    else:
        _select(GENERATIONS[-1])


_from_environment()
