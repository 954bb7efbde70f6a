"""Host stand-in of cuda-bindings (see scripts/host-standins/README.md)."""
