"""Version of the package.

``__version__`` is the newest RMM Python API generation the package serves;
``SUPPORTED_API_VERSIONS`` lists every generation whose API (and own test suite) it serves,
oldest first. Where two generations' behaviours contradict each other, the newest wins
(docs/python.md, "Generation conflicts", lists those cases).
"""

__version__ = "26.06.00"
__git_commit__ = ""
SUPPORTED_API_VERSIONS = ("25.02", "25.10", "26.06")

__all__ = ["SUPPORTED_API_VERSIONS", "__git_commit__", "__version__"]
