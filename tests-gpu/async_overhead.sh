#!/usr/bin/env bash
# The C ABI's cost over the runtime's own call for cuda_async, in one process: now
# tests-gpu/thin_paths.sh (cudart, the driver and librmm.so's C ABI alternating in each
# process), which replaced async_overhead.cpp. Kept so that the commands of the run notes
# still work; on the GPU machine: bash tests-gpu/async_overhead.sh
exec bash "$(dirname "$0")/thin_paths.sh" "$@"
