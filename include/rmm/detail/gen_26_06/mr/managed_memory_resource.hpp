/**
 * @file detail/gen_26_06/mr/managed_memory_resource.hpp
 * @brief RMM 26.06's `rmm::mr::managed_memory_resource`: managed memory (`cudaMallocManaged`),
 * through librmm's managed resource.
 */
#pragma once

#include <rmm/detail/export.hpp>

// RMM 26.06 and later only: the header checks compile every header in 25.x units too.
#if RMM_API_GENERATION >= 2606

#include <rmm/aligned.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/detail/gen_26_06/mr/detail/resource_bases.hpp>

#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <cstddef>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {

/**
 * @brief Managed (unified) memory, accessible from host and device. All instances are
 * interchangeable (equal).
 */
class managed_memory_resource final
  : public detail::interchangeable_resource<managed_memory_resource> {
 public:
  /**
   * @brief Creates the resource.
   * @throws rmm::cuda_error when no runtime is usable
   */
  managed_memory_resource() : interchangeable_resource{rmm_managed_create} {}

  /// @brief Host-accessible memory.
  friend void get_property(managed_memory_resource const&, cuda::mr::host_accessible) noexcept {}
};

static_assert(cuda::mr::resource_with<managed_memory_resource, cuda::mr::device_accessible>);
static_assert(cuda::mr::resource_with<managed_memory_resource, cuda::mr::host_accessible>);

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm

#include <rmm/detail/gen_26_06/mr/detail/known_resources.hpp>

#endif  // RMM_API_GENERATION
