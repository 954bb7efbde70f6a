/**
 * @file detail/gen_25_02/mr/device/cuda_async_managed_memory_resource.hpp
 * @brief Device memory resource allocating managed memory in stream order from a managed
 * memory pool, where the runtime has managed pools.
 */
#pragma once

#include <rmm/detail/export.hpp>

#include <rmm/detail/export.hpp>

#include <rmm/detail/gen_25_02/mr/device/detail/handle_resource.hpp>
#include <rmm/detail/gen_25_02/mr/device/detail/mem_pool_type.hpp>
#include <rmm/rmm.h>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {

/**
 * @brief Device memory resource allocating managed (unified) memory in stream order from a
 * managed memory pool of the current device.
 *
 * Implemented by the Rust core (`rmm_async_managed_create`).
 */
class cuda_async_managed_memory_resource final : public detail::handle_resource {
 public:
  /**
   * @brief Creates the resource for the current device.
   * @throws rmm::logic_error when the runtime has no managed memory pools
   */
  cuda_async_managed_memory_resource()
    : handle_resource{detail::adopt_handle, detail::make_handle(rmm_async_managed_create)}
  {
  }

  /// @brief Takes over an existing handle (one reference) of this kind of resource.
  using handle_resource::handle_resource;

  /**
   * @brief The pool this resource allocates from.
   * @return The `cudaMemPool_t` / `hipMemPool_t` handle
   */
  [[nodiscard]] detail::mem_pool_type pool_handle() const noexcept
  {
    return detail::pool_of(handle());
  }
};

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm
