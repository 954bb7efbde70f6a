/**
 * @file detail/gen_25_02/mr/device/sam_headroom_memory_resource.hpp
 * @brief System-allocated memory placed on the device while it keeps a headroom free.
 */
#pragma once

#include <rmm/detail/export.hpp>

#include <rmm/detail/check.hpp>
#include <rmm/detail/gen_25_02/mr/device/detail/handle_resource.hpp>
#include <rmm/rmm.h>
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/export.hpp>
#include <rmm/mr/device/device_memory_resource.hpp>
#include <rmm/mr/device/system_memory_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <cstddef>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {

/**
 * @brief Device memory resource allocating system memory (for devices with pageable memory
 * access), advising the runtime to place the part that fits in (free − headroom) on the
 * device and the rest on the host; the device is marked as accessing the whole range.
 *
 * Implemented by the Rust core (`rmm_sam_headroom_create`).
 */
class sam_headroom_memory_resource final : public detail::handle_resource {
 public:
  /**
   * @brief Creates the resource for the current device.
   * @param headroom Bytes of device memory to leave free
   * @throws rmm::logic_error when the device cannot access pageable memory
   */
  explicit sam_headroom_memory_resource(std::size_t headroom)
    : handle_resource{detail::adopt_handle, detail::make_handle(rmm_sam_headroom_create, headroom)}
  {
  }

  /// @brief Takes over an existing handle (one reference) of this kind of resource.
  using handle_resource::handle_resource;
};

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm
