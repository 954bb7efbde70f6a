/**
 * @file pinned_host_memory_resource.hpp
 * @brief Pinned (page-locked) host memory resource, accessible from host and device.
 */
#pragma once

#include <rmm/mr/device/detail/handle_resource.hpp>
#include <rmm/rmm.h>
#include <rmm/aligned.hpp>
#include <rmm/detail/aligned.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/detail/export.hpp>
#include <rmm/detail/nvtx/ranges.hpp>

#include <cstddef>
#include <utility>

namespace rmm::mr {

/**
 * @brief Memory resource allocating pinned host memory with cudaHostAlloc/hipHostMalloc.
 *
 * The memory is accessible from the host and the device. Unlike RMM, where this class only
 * models the cuda::mr resource concepts, it derives from device_memory_resource, so it can be
 * set as a device resource or used as the upstream of a pool directly.
 */
class pinned_host_memory_resource final : public detail::handle_resource {
 public:
  /**
   * @brief Creates the resource.
   * @throws rmm::cuda_error when no runtime is available
   */
  pinned_host_memory_resource()
    : handle_resource{detail::adopt_handle, detail::create_handle(&rmm_pinned_host_create)}
  {
  }

  /**
   * @brief Takes over an existing handle (one reference) of this kind of resource.
   * @param handle The handle
   */
  pinned_host_memory_resource(detail::adopt_handle_t, rmm_resource_t handle) noexcept
    : handle_resource{detail::adopt_handle, handle}
  {
  }
};

}  // namespace rmm::mr
