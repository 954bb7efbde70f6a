/**
 * @file detail/gen_26_06/mr/cuda_async_managed_memory_resource.hpp
 * @brief RMM 26.06's `rmm::mr::cuda_async_managed_memory_resource`: stream-ordered managed
 * memory from a managed pool, through librmm's async managed resource.
 */
#pragma once

#include <rmm/detail/export.hpp>

// RMM 26.06 and later only: the header checks compile every header in 25.x units too.
#if RMM_API_GENERATION >= 2606

#include <rmm/aligned.hpp>
#include <rmm/detail/runtime_capabilities.hpp>
#include <rmm/detail/gen_26_06/mr/detail/resource_bases.hpp>

#include <cuda/memory_resource>

#include <cstddef>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {
namespace detail {

/**
 * @brief The shared state of a cuda_async_managed_memory_resource.
 */
class cuda_async_managed_memory_resource_impl final
  : public librmm_equal_impl<cuda_async_managed_memory_resource_impl> {
 public:
  /// @brief Creates librmm's async managed resource.
  cuda_async_managed_memory_resource_impl()
    : librmm_equal_impl{make_handle(rmm_async_managed_create)}
  {
  }

  /**
   * @brief The runtime's managed pool.
   * @return The pool handle
   */
  [[nodiscard]] cudaMemPool_t pool_handle() const noexcept
  {
    void* pool = nullptr;
    (void)rmm_async_pool_handle(handle(), &pool);
    return static_cast<cudaMemPool_t>(pool);
  }
};

}  // namespace detail

/**
 * @brief Stream-ordered managed memory (host and device accessible). Copies share the pool.
 */
class RMM_EXPORT cuda_async_managed_memory_resource final
  : public detail::shared_handle_resource<detail::cuda_async_managed_memory_resource_impl> {
 public:
  /// @brief Device-accessible memory.
  friend void get_property(cuda_async_managed_memory_resource const&,
                           cuda::mr::device_accessible) noexcept
  {
  }
  /// @brief Host-accessible memory.
  friend void get_property(cuda_async_managed_memory_resource const&,
                           cuda::mr::host_accessible) noexcept
  {
  }

  /**
   * @brief Uses the current device's managed pool.
   * @throws rmm::logic_error when the runtime has no managed pools
   */
  cuda_async_managed_memory_resource() : shared_handle_resource{std::in_place} {}

  /**
   * @brief The runtime's managed pool.
   * @return The pool handle
   */
  [[nodiscard]] cudaMemPool_t pool_handle() const noexcept { return get().pool_handle(); }
};

static_assert(
  cuda::mr::resource_with<cuda_async_managed_memory_resource, cuda::mr::device_accessible>);
static_assert(
  cuda::mr::resource_with<cuda_async_managed_memory_resource, cuda::mr::host_accessible>);

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm

#include <rmm/detail/gen_26_06/mr/detail/known_resources.hpp>

#endif  // RMM_API_GENERATION
