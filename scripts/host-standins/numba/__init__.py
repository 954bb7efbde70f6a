"""Host stand-in of Numba (see scripts/host-standins/README.md): ``numba.cuda`` only."""
