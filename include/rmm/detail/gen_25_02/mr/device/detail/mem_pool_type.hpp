/**
 * @file detail/mem_pool_type.hpp
 * @brief The runtime's stream-ordered memory pool handle type (`hipMemPool_t`,
 * `cudaMemPool_t`, or an opaque pointer when no runtime headers are available).
 */
#pragma once

#include <rmm/detail/export.hpp>

#include <rmm/cuda_stream_view.hpp>

/// @brief Opaque memory pool type used when neither HIP nor CUDA headers are available.
struct rmm_opaque_mem_pool;

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {
namespace detail {
#if defined(RMM_DETAIL_STREAM_HIP)
/// @brief The runtime's memory pool handle type.
using mem_pool_type = hipMemPool_t;
#elif defined(RMM_DETAIL_STREAM_CUDA)
/// @brief The runtime's memory pool handle type.
using mem_pool_type = cudaMemPool_t;
#else
/// @brief The runtime's memory pool handle type (opaque: no runtime headers were found).
using mem_pool_type = ::rmm_opaque_mem_pool*;
#endif

/**
 * @brief The pool handle of an async resource implemented by the Rust core.
 * @param handle A cuda_async, cuda_async_view or cuda_async_managed resource handle
 * @return Its pool, or null when the handle is not such a resource
 */
inline mem_pool_type pool_of(rmm_resource_t handle) noexcept
{
  void* pool = nullptr;
  if (handle == nullptr || rmm_async_pool_handle(handle, &pool) != RMM_STATUS_SUCCESS) {
    return nullptr;
  }
  return reinterpret_cast<mem_pool_type>(pool);
}
}  // namespace detail
}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm
