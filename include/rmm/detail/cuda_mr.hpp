/**
 * @file cuda_mr.hpp
 * @brief Detects CCCL's (or libhipcxx's) `cuda::mr` interface and defines `RMM_HAS_CUDA_MR`
 * when rmm's streams and resource references should interoperate with it.
 *
 * Define `RMM_DISABLE_CUDA_MR` to turn the interoperation off.
 */
#pragma once

#if !defined(RMM_DISABLE_CUDA_MR) && defined(__has_include)
#if __has_include(<cuda/memory_resource>) && __has_include(<cuda/stream_ref>)
#include <cuda/memory_resource>
#include <cuda/stream_ref>
// CCCL up to 3.0 (and libhipcxx) define the properties and concepts only with the
// experimental flag; CCCL 3.1 released them.
#if defined(LIBCUDACXX_ENABLE_EXPERIMENTAL_MEMORY_RESOURCE) ||                      \
  (defined(CCCL_MAJOR_VERSION) && defined(CCCL_MINOR_VERSION) &&                   \
   (CCCL_MAJOR_VERSION > 3 || (CCCL_MAJOR_VERSION == 3 && CCCL_MINOR_VERSION >= 1)))
/// @brief Defined to 1 when the references interoperate with `cuda::mr`.
#define RMM_HAS_CUDA_MR 1
#endif
#endif
#endif
