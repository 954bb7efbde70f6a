/**
 * @file detail/gen_25_02/mr/device/managed_memory_resource.hpp
 * @brief Device memory resource allocating managed (unified) memory with
 * cudaMallocManaged/hipMallocManaged.
 */
#pragma once

#include <rmm/detail/export.hpp>

#include <rmm/detail/gen_25_02/mr/device/detail/handle_resource.hpp>
#include <rmm/rmm.h>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/detail/export.hpp>
#include <rmm/mr/device/device_memory_resource.hpp>

#include <cstddef>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {

/**
 * @brief Device memory resource allocating managed (unified) memory with
 * cudaMallocManaged/hipMallocManaged.
 *
 * Implemented by the Rust core (`rmm_managed_create`); copies share the same underlying resource.
 */
class managed_memory_resource final : public detail::handle_resource {
 public:
  /**
   * @brief Creates the resource for the current device.
   * @throws rmm::cuda_error when no runtime is available
   */
  managed_memory_resource()
    : handle_resource{detail::adopt_handle, detail::make_handle(rmm_managed_create)}
  {
  }

  /// @brief Takes over an existing handle (one reference) of this kind of resource.
  using handle_resource::handle_resource;
};

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm
