/**
 * @file detail/api_26_06/mr/pinned_host_memory_resource.hpp
 * @brief RMM 26.06's `rmm::mr::pinned_host_memory_resource` (included through
 * `<rmm/mr/pinned_host_memory_resource.hpp>` by 26.06 translation units): page-locked host
 * memory, accessible from host and device, through librmm's pinned host resource.
 */
#pragma once

#include <rmm/detail/export.hpp>

// RMM 26.06 and later only: the header checks compile every header in 25.x units too.
#if RMM_API_GENERATION >= 2606

#include <rmm/aligned.hpp>
#include <rmm/detail/aligned.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/detail/gen_26_06/mr/detail/resource_bases.hpp>

#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <cstddef>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {

/**
 * @brief Pinned (page-locked) host memory, usable by the device. All instances are
 * interchangeable (equal). Allocations are 256-byte aligned.
 */
class pinned_host_memory_resource final
  : public detail::interchangeable_resource<pinned_host_memory_resource> {
 public:
  /**
   * @brief Creates the resource.
   * @throws rmm::cuda_error when no runtime is usable
   */
  pinned_host_memory_resource() : interchangeable_resource{rmm_pinned_host_create} {}

  /// @brief Host-accessible memory.
  friend void get_property(pinned_host_memory_resource const&, cuda::mr::host_accessible) noexcept
  {
  }
};

static_assert(cuda::mr::resource_with<pinned_host_memory_resource, cuda::mr::device_accessible>);
static_assert(cuda::mr::resource_with<pinned_host_memory_resource, cuda::mr::host_accessible>);

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm

#include <rmm/detail/gen_26_06/mr/detail/known_resources.hpp>

#endif  // RMM_API_GENERATION
