/**
 * @file detail/gen_25_02/mr/device/cuda_async_memory_resource.hpp
 * @brief Device memory resource allocating in stream order from a memory pool of its own
 * (cudaMallocFromPoolAsync / hipMallocFromPoolAsync).
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
#include <rmm/detail/runtime_capabilities.hpp>
#include <rmm/detail/thrust_namespace.h>
#include <rmm/mr/device/cuda_async_view_memory_resource.hpp>
#include <rmm/mr/device/device_memory_resource.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <limits>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {

/**
 * @brief Device memory resource allocating in stream order from a memory pool it creates on
 * the current device and destroys with its last copy.
 *
 * Implemented by the Rust core (`rmm_async_create`); copies share the same pool.
 */
class cuda_async_memory_resource final : public detail::handle_resource {
 public:
  /**
   * @brief How the pool's memory may be shared with other processes
   * (`cudaMemAllocationHandleType`).
   */
  enum class allocation_handle_type : std::int32_t {
    none                  = 0x0,  ///< Not exportable
    posix_file_descriptor = 0x1,  ///< A POSIX file descriptor (int)
    win32                 = 0x2,  ///< A Win32 NT handle
    win32_kmt             = 0x4,  ///< A Win32 KMT handle
    fabric                = 0x8   ///< A fabric handle (multi-node NVLink)
  };

  /**
   * @brief What the pool's memory may be used for besides ordinary kernels
   * (`cudaMemPoolProps::usage`, RMM 25.10). The resource asks for hardware decompression only
   * where the runtime offers it (rmm::detail::hwdecompress), which the runtimes rmm-rs drives
   * through its C ABI do not expose yet: the pool is then an ordinary one.
   */
  enum class mempool_usage : unsigned short {
    hw_decompress = 0x2  ///< Usable as a buffer of the hardware decompression engine
  };

  /**
   * @brief Creates the resource and its pool on the current device.
   * @param initial_pool_size Bytes reserved now (by one allocation and free); none: half of
   * the free device memory
   * @param release_threshold Bytes the pool keeps reserved at synchronizations; none: the
   * device's total memory
   * @param export_handle_type IPC export type of the pool; none: not exportable
   * @throws rmm::logic_error when the runtime or device lacks stream-ordered pools or the
   * handle type
   * @throws rmm::cuda_error when the runtime fails
   */
  cuda_async_memory_resource(std::optional<std::size_t> initial_pool_size             = {},
                             std::optional<std::size_t> release_threshold             = {},
                             std::optional<allocation_handle_type> export_handle_type = {})
    : handle_resource{detail::adopt_handle,
                      create(initial_pool_size, release_threshold, export_handle_type)}
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

 private:
  static rmm_resource_t create(std::optional<std::size_t> initial_pool_size,
                               std::optional<std::size_t> release_threshold,
                               std::optional<allocation_handle_type> export_handle_type)
  {
    rmm_resource_t handle = nullptr;
    auto const type = static_cast<int>(export_handle_type.value_or(allocation_handle_type::none));
    rmm::detail::check(rmm_async_create(initial_pool_size ? &*initial_pool_size : nullptr,
                                        release_threshold ? &*release_threshold : nullptr,
                                        type,
                                        &handle));
    return handle;
  }
};

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm
