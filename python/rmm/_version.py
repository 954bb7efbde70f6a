"""Version of the package: the RMM Python API level it implements."""

__version__ = "25.02.00"
__git_commit__ = ""

__all__ = ["__git_commit__", "__version__"]
