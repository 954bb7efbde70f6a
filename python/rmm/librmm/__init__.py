"""RMM's ``rmm.librmm`` (its Cython declarations of the C++ library); here only the Python
names it exposes: ``rmm.librmm._logger.level_enum``."""
