/**
 * @file detail/runtime_select.h
 * @brief Which GPU runtime's header the package's headers build on (usable from C and C++).
 *
 * Defines `RMM_DETAIL_RUNTIME_HIP` when compiling for AMD's HIP platform and HIP's
 * `hip/hip_runtime_api.h` is found, else `RMM_DETAIL_RUNTIME_CUDA` when CUDA's
 * `cuda_runtime_api.h` is found, else neither (the headers then use opaque stream handles).
 *
 * The HIP platform is AMD's when `__HIP_PLATFORM_AMD__` (or its older name
 * `__HIP_PLATFORM_HCC__`) is defined, as hipcc and CMake's `hip::host` do, or when clang
 * compiles HIP source. HIP's header is never used without that: it refuses to compile unless
 * a platform is named, and it is often on the default include path (Debian's
 * libamdhip64-dev, ROCm toolchains) of programs built for neither runtime. HIP on NVIDIA's
 * platform is CUDA underneath, whose header is used directly.
 */
#pragma once

#if defined(__HIP_PLATFORM_AMD__) || defined(__HIP_PLATFORM_HCC__) || \
  (defined(__clang__) && defined(__HIP__))
#if __has_include(<hip/hip_runtime_api.h>)
#define RMM_DETAIL_RUNTIME_HIP 1
#endif
#endif

#if !defined(RMM_DETAIL_RUNTIME_HIP) && __has_include(<cuda_runtime_api.h>)
#define RMM_DETAIL_RUNTIME_CUDA 1
#endif
