"""Version of the package.

``__version__`` is the newest RMM Python API generation the package serves;
``SUPPORTED_API_VERSIONS`` lists every generation whose API (and own test suite) it serves,
oldest first. The process follows one of them: ``RMM_API_VERSION`` at import, else the newest
(``rmm.api_version()``, ``rmm.set_api_version()``; docs/python.md, "API generations").
"""

__version__ = "26.10.00"
__git_commit__ = ""
SUPPORTED_API_VERSIONS = ("25.02", "25.10", "26.06", "26.08", "26.10")

__all__ = ["SUPPORTED_API_VERSIONS", "__git_commit__", "__version__"]
