"""Version of the package: the RMM Python API level it implements."""

__version__ = "25.02.00"
__git_commit__ = ""
