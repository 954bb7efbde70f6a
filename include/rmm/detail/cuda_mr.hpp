/**
 * @file cuda_mr.hpp
 * @brief Brings in CCCL's (or libhipcxx's) `cuda::mr` interface when it is available and
 * defines `RMM_HAS_CUDA_MR` when rmm's resources, streams and references interoperate with it.
 *
 * RMM 25.02 makes `cuda::mr` usable to everything that includes its headers: its CMake target
 * defines `LIBCUDACXX_ENABLE_EXPERIMENTAL_MEMORY_RESOURCE`, which CCCL up to 3.0 (and
 * libhipcxx) need before they declare the memory-resource properties and concepts. Our
 * `rmm::rmm` target defines it too; this header also defines it for builds that do not use
 * CMake, provided `<cuda/memory_resource>` was not already included without it (then the
 * names are missing and interoperation stays off rather than failing to compile).
 * CCCL 3.1 released the interface, so no flag is needed there.
 *
 * Define `RMM_DISABLE_CUDA_MR` to turn the interoperation off.
 */
#pragma once

#if !defined(RMM_DISABLE_CUDA_MR) && defined(__has_include)
#if __has_include(<cuda/memory_resource>) && __has_include(<cuda/stream_ref>)

// Include guards of <cuda/memory_resource> in CCCL 2.x/3.x and libhipcxx: if the header was
// already parsed, defining the flag now would change nothing.
#if !defined(LIBCUDACXX_ENABLE_EXPERIMENTAL_MEMORY_RESOURCE) && !defined(_CUDA_MEMORY_RESOURCE) && \
  !defined(_CUDA_MEMORY_RESOURCE_) && !defined(__CUDA_MEMORY_RESOURCE)
#define LIBCUDACXX_ENABLE_EXPERIMENTAL_MEMORY_RESOURCE
#endif

#include <cuda/memory_resource>
#include <cuda/stream_ref>

// CCCL up to 3.0 (and libhipcxx) define the properties and concepts only with the
// experimental flag; CCCL 3.1 released them.
#if defined(LIBCUDACXX_ENABLE_EXPERIMENTAL_MEMORY_RESOURCE) ||   \
  (defined(CCCL_MAJOR_VERSION) && defined(CCCL_MINOR_VERSION) && \
   (CCCL_MAJOR_VERSION > 3 || (CCCL_MAJOR_VERSION == 3 && CCCL_MINOR_VERSION >= 1)))
/// @brief Defined to 1 when rmm's resources and references interoperate with `cuda::mr`.
#define RMM_HAS_CUDA_MR 1
#endif

// CCCL 3.1 renamed the interface: the synchronous functions are allocate_sync /
// deallocate_sync and the stream-ordered ones allocate / deallocate with the stream first.
#if defined(RMM_HAS_CUDA_MR) && defined(CCCL_MAJOR_VERSION) && defined(CCCL_MINOR_VERSION) && \
  (CCCL_MAJOR_VERSION > 3 || (CCCL_MAJOR_VERSION == 3 && CCCL_MINOR_VERSION >= 1))
/// @brief Defined to 1 when `cuda::mr` uses CCCL 3.1's names (allocate_sync, stream first).
#define RMM_CUDA_MR_SYNC_NAMES 1
#endif

#endif
#endif
