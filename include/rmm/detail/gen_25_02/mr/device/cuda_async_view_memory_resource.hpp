/**
 * @file detail/gen_25_02/mr/device/cuda_async_view_memory_resource.hpp
 * @brief Device memory resource allocating in stream order from an existing memory pool it
 * does not own.
 */
#pragma once

#include <rmm/detail/export.hpp>

#include <rmm/detail/check.hpp>
#include <rmm/detail/gen_25_02/mr/device/detail/handle_resource.hpp>
#include <rmm/detail/gen_25_02/mr/device/detail/mem_pool_type.hpp>
#include <rmm/rmm.h>
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/detail/export.hpp>
#include <rmm/detail/thrust_namespace.h>
#include <rmm/mr/device/device_memory_resource.hpp>

#include <cstddef>
#include <limits>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {

/**
 * @brief Device memory resource allocating in stream order (cudaMallocFromPoolAsync /
 * hipMallocFromPoolAsync) from a pool it does not own, e.g. the device's default pool.
 *
 * The pool must outlive the resource. Implemented by the Rust core (`rmm_async_view_create`).
 */
class cuda_async_view_memory_resource final : public detail::handle_resource {
 public:
  /**
   * @brief Creates a view of @p pool_handle.
   * @param pool_handle The pool (`cudaMemPool_t` / `hipMemPool_t`)
   * @throws rmm::logic_error when the handle is null or the runtime lacks stream-ordered pools
   */
  explicit cuda_async_view_memory_resource(detail::mem_pool_type pool_handle)
    : handle_resource{detail::adopt_handle, create(pool_handle)}
  {
  }

  /// @brief Takes over an existing handle (one reference) of this kind of resource.
  using handle_resource::handle_resource;

  /**
   * @brief The pool this resource allocates from.
   * @return The pool handle given at construction
   */
  [[nodiscard]] detail::mem_pool_type pool_handle() const noexcept
  {
    return detail::pool_of(handle());
  }

 private:
  static rmm_resource_t create(detail::mem_pool_type pool_handle)
  {
    rmm_resource_t handle = nullptr;
    rmm::detail::check(rmm_async_view_create(reinterpret_cast<void*>(pool_handle), &handle));
    return handle;
  }
};

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm
