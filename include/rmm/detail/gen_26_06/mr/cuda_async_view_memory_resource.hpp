/**
 * @file detail/gen_26_06/mr/cuda_async_view_memory_resource.hpp
 * @brief RMM 26.06's `rmm::mr::cuda_async_view_memory_resource`: stream-ordered allocation
 * from an existing memory pool it does not own, through librmm's async view resource.
 */
#pragma once

#include <rmm/detail/export.hpp>

// RMM 26.06 and later only: the header checks compile every header in 25.x units too.
#if RMM_API_GENERATION >= 2606

#include <rmm/aligned.hpp>
#include <rmm/detail/runtime_capabilities.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/detail/gen_26_06/mr/detail/resource_bases.hpp>

#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <cstddef>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {

/**
 * @brief Allocates from a `cudaMemPool_t` owned by someone else (which must outlive it).
 * Two views are equal when they view the same pool.
 */
class cuda_async_view_memory_resource final : public detail::base_resource_handle {
 public:
  /**
   * @brief A view of @p pool_handle.
   * @param pool_handle The pool (not owned)
   * @throws rmm::logic_error for a null pool, or a runtime without stream-ordered pools
   */
  cuda_async_view_memory_resource(cudaMemPool_t pool_handle)
    : base_resource_handle{detail::adopt_handle, make(pool_handle)}, pool_{pool_handle}
  {
  }

  /// @brief A view of no pool: allocating from it fails with rmm::logic_error.
  cuda_async_view_memory_resource() noexcept : base_resource_handle{detail::adopt_handle, nullptr}
  {
  }

  /**
   * @brief The pool viewed.
   * @return The pool handle
   */
  [[nodiscard]] cudaMemPool_t pool_handle() const noexcept { return pool_; }

  /// @brief Whether both view the same pool.
  /// @param other The other view
  /// @return true when equal
  [[nodiscard]] bool operator==(cuda_async_view_memory_resource const& other) const noexcept
  {
    return pool_ == other.pool_;
  }
  /// @brief Negation of operator==.
  /// @param other The other view
  /// @return true when not equal
  [[nodiscard]] bool operator!=(cuda_async_view_memory_resource const& other) const noexcept
  {
    return !(*this == other);
  }

  /// @brief Device-accessible memory.
  friend void get_property(cuda_async_view_memory_resource const&,
                           cuda::mr::device_accessible) noexcept
  {
  }

 private:
  static rmm_resource_t make(cudaMemPool_t pool_handle)
  {
    RMM_EXPECTS(pool_handle != nullptr,
                "cuda_async_view_memory_resource: null pool handle; pass a cudaMemPool_t such as "
                "cudaDeviceGetDefaultMemPool's");
    return detail::make_handle(rmm_async_view_create, static_cast<void*>(pool_handle));
  }

  cudaMemPool_t pool_{};
};

static_assert(
  cuda::mr::resource_with<cuda_async_view_memory_resource, cuda::mr::device_accessible>);

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm

#include <rmm/detail/gen_26_06/mr/detail/known_resources.hpp>

#endif  // RMM_API_GENERATION
