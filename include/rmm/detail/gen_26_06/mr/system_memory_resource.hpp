/**
 * @file detail/gen_26_06/mr/system_memory_resource.hpp
 * @brief RMM 26.06's `rmm::mr::system_memory_resource`: pageable host memory used by the
 * device (HMM/ATS), through librmm's system resource.
 */
#pragma once

#include <rmm/detail/export.hpp>

// RMM 26.06 and later only: the header checks compile every header in 25.x units too.
#if RMM_API_GENERATION >= 2606

#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/detail/aligned.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/detail/format.hpp>
#include <rmm/detail/gen_26_06/mr/detail/resource_bases.hpp>
#include <rmm/mr/detail/system_memory_support.hpp>

#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <cstddef>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {
/**
 * @brief System (malloc'd) memory that the device accesses through HMM or ATS. Freeing waits
 * for the stream first. All instances are interchangeable (equal).
 */
class system_memory_resource final
  : public detail::interchangeable_resource<system_memory_resource> {
 public:
  /**
   * @brief Creates the resource.
   * @throws rmm::logic_error when the current device cannot access pageable memory
   */
  system_memory_resource() : interchangeable_resource{rmm_system_create} {}

  /// @brief Host-accessible memory.
  friend void get_property(system_memory_resource const&, cuda::mr::host_accessible) noexcept {}
};

static_assert(cuda::mr::resource_with<system_memory_resource, cuda::mr::device_accessible>);
static_assert(cuda::mr::resource_with<system_memory_resource, cuda::mr::host_accessible>);

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm

#include <rmm/detail/gen_26_06/mr/detail/known_resources.hpp>

#endif  // RMM_API_GENERATION
