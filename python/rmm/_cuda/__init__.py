"""RMM's older module paths (``rmm._cuda.stream``, RMM 25.02 and 25.10 only; ``rmm._cuda.gpu``)."""

from rmm import _generation

_generation.gate(globals(), {"stream": (None, "26.06")})
