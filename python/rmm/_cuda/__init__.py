"""RMM's older module paths (``rmm._cuda.stream``, ``rmm._cuda.gpu``)."""
