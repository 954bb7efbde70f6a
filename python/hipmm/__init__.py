"""hipmm: hipMM's name for the ``rmm`` package (hipMM's wheel installs both).

``import hipmm`` gives the objects of ``rmm``, and ``hipmm.<sub>`` the very module
``rmm.<sub>`` (``hipmm.mr is rmm.mr``): one registry, one set of classes, so resources,
buffers and exceptions made through either name are the same things.
"""

import importlib
import importlib.abc
import importlib.util
import sys

import rmm

_PREFIX = __name__ + "."


class _AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports ``hipmm.X`` as the module ``rmm.X`` (never a second copy of it)."""

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith(_PREFIX):
            return None
        real = "rmm." + fullname[len(_PREFIX) :]
        try:
            if importlib.util.find_spec(real) is None:
                return None
        except ModuleNotFoundError:
            return None
        return importlib.util.spec_from_loader(fullname, self, is_package=False)

    def create_module(self, spec):
        module = importlib.import_module("rmm." + spec.name[len(_PREFIX) :])
        # The import system overwrites __spec__ on the module it is handed; rmm's own
        # spec is put back in exec_module so that rmm.X keeps describing itself.
        self._saved_spec = module.__spec__
        return module

    def exec_module(self, module):
        module.__spec__ = self._saved_spec


if not any(isinstance(f, _AliasFinder) for f in sys.meta_path):
    sys.meta_path.insert(0, _AliasFinder())

__all__ = list(rmm.__all__)
__version__ = rmm.__version__
__git_commit__ = rmm.__git_commit__


def __getattr__(name):
    # Everything rmm has (its submodules included) is hipmm's, looked up when asked so
    # that both names always agree.
    try:
        return getattr(rmm, name)
    except AttributeError:
        raise AttributeError(f"module 'hipmm' has no attribute {name!r}") from None


def __dir__():
    return sorted(set(globals()) | set(dir(rmm)))
