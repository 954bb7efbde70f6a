/**
 * @file detail/runtime_async_alloc.hpp
 * @brief `rmm::detail::runtime_async_alloc`: whether the runtime and device support
 * stream-ordered memory pools and their IPC export handle types (RMM's
 * `rmm/detail/runtime_async_alloc.hpp`).
 *
 * rmm-rs answers through its C ABI (`rmm_device_supports_async_pools`,
 * `rmm_device_async_pool_handle_types`), i.e. for the runtime librmm.so uses (HIP, CUDA or the
 * host emulation), so no GPU runtime library needs to be linked.
 */
#pragma once

#include <rmm/cuda_device.hpp>
#include <rmm/detail/check.hpp>
#include <rmm/detail/export.hpp>
#include <rmm/rmm.h>

#include <memory>
#include <optional>
#include <type_traits>

#if defined(__has_include)
#if __has_include(<dlfcn.h>)
#include <dlfcn.h>
#endif
#endif

namespace RMM_EXPORT rmm {
RMM_API_NAMESPACE_BEGIN
namespace detail {

/**
 * @brief Queries about stream-ordered allocation (`cudaMallocAsync` / `hipMallocAsync`).
 */
struct runtime_async_alloc {
  /**
   * @brief Whether the current device supports stream-ordered memory pools.
   * @return true when supported; false when not, or when no runtime/device is available
   */
  static bool is_supported()
  {
    int device = 0;
    if (rmm_get_current_device(&device) != RMM_STATUS_SUCCESS) { return false; }
    bool supported = false;
    return rmm_device_supports_async_pools(device, &supported) == RMM_STATUS_SUCCESS && supported;
  }

  /**
   * @brief Whether memory pools of the current device can be exported as @p handle_type.
   *
   * Accepts `cudaMemAllocationHandleType`, `hipMemAllocationHandleType`,
   * `rmm::mr::cuda_async_memory_resource::allocation_handle_type` or the integer value. The
   * "none" type (0) is always supported.
   *
   * @param handle_type The IPC export handle type
   * @return true when supported
   * @throws rmm::cuda_error when the runtime fails to answer
   */
  template <
    typename HandleType,
    typename = std::enable_if_t<std::is_enum_v<HandleType> || std::is_integral_v<HandleType>>>
  static bool is_export_handle_type_supported(HandleType handle_type)
  {
    auto const requested = static_cast<int>(handle_type);
    if (requested == 0) { return true; }
    int device = 0;
    rmm::detail::check(rmm_get_current_device(&device));
    int mask = 0;
    rmm::detail::check(rmm_device_async_pool_handle_types(device, &mask));
    return (mask & requested) == requested;
  }
};

}  // namespace detail
RMM_API_NAMESPACE_END
}  // namespace rmm
