/**
 * @file detail/gen_25_02/mr/device/system_memory_resource.hpp
 * @brief Device memory resource allocating system (pageable host) memory, for devices that can
 * access it (HMM/ATS); synchronizes the stream before freeing.
 */
#pragma once

#include <rmm/detail/export.hpp>
#include <rmm/mr/detail/system_memory_support.hpp>

#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/check.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/detail/export.hpp>
#include <rmm/detail/gen_25_02/mr/device/detail/handle_resource.hpp>
#include <rmm/mr/device/device_memory_resource.hpp>
#include <rmm/rmm.h>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {

/**
 * @brief Device memory resource allocating system (pageable host) memory, for devices that can
 * access it (HMM/ATS); synchronizes the stream before freeing.
 *
 * Implemented by the Rust core (`rmm_system_create`); copies share the same underlying resource.
 */
class system_memory_resource final : public detail::handle_resource {
 public:
  /**
   * @brief Creates the resource for the current device.
   * @throws rmm::cuda_error when no runtime is available
   * @throws rmm::logic_error when the device cannot access pageable system memory
   */
  system_memory_resource()
    : handle_resource{detail::adopt_handle, detail::make_handle(rmm_system_create)}
  {
  }

  /// @brief Takes over an existing handle (one reference) of this kind of resource.
  using handle_resource::handle_resource;
};

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm
