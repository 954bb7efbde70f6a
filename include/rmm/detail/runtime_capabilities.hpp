/**
 * @file detail/runtime_capabilities.hpp
 * @brief What the runtime and the current device support (RMM 25.10's
 * `rmm/detail/runtime_capabilities.hpp`): `runtime_async_alloc`, `export_handle_type`,
 * `hwdecompress` and `concurrent_managed_access`, each with a static `is_supported()`.
 *
 * rmm-rs answers through its C ABI, i.e. for the runtime librmm.so uses (HIP, CUDA or the host
 * emulation), so no GPU runtime library needs to be linked. Answers are not cached: a program
 * may switch devices between queries, and each query is one question to the runtime.
 */
#pragma once

#include <rmm/cuda_device.hpp>
#include <rmm/detail/check.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/detail/export.hpp>
#include <rmm/detail/runtime_async_alloc.hpp>
#include <rmm/rmm.h>

#include <cstring>
#include <type_traits>

/// @brief The oldest CUDA driver (12.8, in CUDA's numbering) whose memory pools can serve the
/// hardware decompression engine (`cudaMemPoolCreateUsageHwDecompress`).
#if RMM_DETAIL_API_REMOVED_IN_26_08
#define RMM_MIN_HWDECOMPRESS_CUDA_VERSION 12080
#else
#define RMM_MIN_HWDECOMPRESS_CUDA_DRIVER_VERSION 12080
#endif

#if RMM_DETAIL_API_REMOVED_IN_26_08
#define RMM_DETAIL_MIN_HWDECOMPRESS_VERSION RMM_MIN_HWDECOMPRESS_CUDA_VERSION
#else
#define RMM_DETAIL_MIN_HWDECOMPRESS_VERSION RMM_MIN_HWDECOMPRESS_CUDA_DRIVER_VERSION
#endif

namespace RMM_EXPORT rmm {
RMM_API_NAMESPACE_BEGIN
namespace detail {

/**
 * @brief Whether memory pools of the current device can be exported with a given IPC handle
 * type (`cudaDevAttrMemoryPoolSupportedHandleTypes`).
 */
struct export_handle_type {
  /**
   * @brief Whether @p handle_type is supported on the current device.
   *
   * Accepts `cudaMemAllocationHandleType`, `hipMemAllocationHandleType`,
   * `rmm::mr::cuda_async_memory_resource::allocation_handle_type` or the integer value. The
   * "none" type (0) is always supported; a runtime without the attribute supports no other.
   * @param handle_type The handle type (a bit mask of types checks all of them)
   * @return true when supported
   * @throws rmm::cuda_error when the runtime fails to answer for another reason
   */
  template <
    typename HandleType,
    typename = std::enable_if_t<std::is_enum_v<HandleType> || std::is_integral_v<HandleType>>>
  static bool is_supported(HandleType handle_type)
  {
    auto const requested = static_cast<int>(handle_type);
    if (requested == 0) { return true; }
    int device = 0;
    rmm::detail::check(rmm_get_current_device(&device));
    int mask          = 0;
    auto const status = rmm_device_async_pool_handle_types(device, &mask);
    // A runtime without stream-ordered pools has no handle types to offer: not an error.
    if (status == RMM_STATUS_UNSUPPORTED) { return false; }
    rmm::detail::check(status);
    return (mask & requested) == requested;
  }
};

/**
 * @brief Whether memory pools may be created for the hardware decompression engine
 * (`cudaMemPoolCreateUsageHwDecompress`): CUDA with a 12.8 or newer driver. HIP and the host
 * emulation have no such engine.
 */
struct hwdecompress {
  /**
   * @brief Whether the runtime in use is CUDA with a driver of 12.8 or newer.
   * @return true when supported
   */
  static bool is_supported()
  {
    char const* name = nullptr;
    if (rmm_runtime_name(&name) != RMM_STATUS_SUCCESS || name == nullptr ||
        std::strcmp(name, "cuda") != 0) {
      return false;
    }
    int32_t version = 0;
    return rmm_driver_get_version(&version) == RMM_STATUS_SUCCESS &&
           version >= RMM_DETAIL_MIN_HWDECOMPRESS_VERSION;
  }
};

/**
 * @brief Whether the current device can access managed memory concurrently with the host
 * (`cudaDevAttrConcurrentManagedAccess`), which prefetching managed memory needs.
 */
struct concurrent_managed_access {
  /**
   * @brief Whether the current device reports concurrent managed access.
   * @return true when supported; false when not, or when no runtime/device is available
   */
  static bool is_supported()
  {
    // CUDA's number for cudaDevAttrConcurrentManagedAccess; rmm_device_get_attribute takes
    // CUDA's numbering whatever the runtime.
    constexpr int32_t concurrent_managed_access_attribute = 89;
    int device                                            = 0;
    if (rmm_get_current_device(&device) != RMM_STATUS_SUCCESS) { return false; }
    int32_t value = 0;
    return rmm_device_get_attribute(&value, concurrent_managed_access_attribute, device) ==
             RMM_STATUS_SUCCESS &&
           value == 1;
  }
};

#if RMM_DETAIL_API_MANAGED_POOL_CAPABILITIES
/**
 * @brief Whether stream-ordered managed pools can be used (RMM 26.06): concurrent managed
 * access and a runtime and driver of CUDA 13.0 or later (what the async managed resource needs).
 */
struct runtime_async_managed_alloc {
  /// @brief Whether supported. @return true when supported
  static bool is_supported()
  {
    if (!concurrent_managed_access::is_supported()) { return false; }
    int32_t runtime = 0;
    int32_t driver  = 0;
    return rmm_runtime_get_version(&runtime) == RMM_STATUS_SUCCESS &&
           rmm_driver_get_version(&driver) == RMM_STATUS_SUCCESS && runtime >= 13000 &&
           driver >= 13000;
  }
};

/**
 * @brief Whether the current device shares memory with the host (`cudaDevAttrIntegrated`).
 */
struct device_integrated_memory {
  /// @brief Whether integrated. @return true when the device reports it
  static bool is_supported()
  {
    // CUDA's number for cudaDevAttrIntegrated (rmm_device_get_attribute takes CUDA's numbers).
    constexpr int32_t integrated_attribute = 18;
    int device                             = 0;
    if (rmm_get_current_device(&device) != RMM_STATUS_SUCCESS) { return false; }
    int32_t value = 0;
    return rmm_device_get_attribute(&value, integrated_attribute, device) == RMM_STATUS_SUCCESS &&
           value == 1;
  }
};
#endif

}  // namespace detail
RMM_API_NAMESPACE_END
}  // namespace rmm
