/**
 * @file detail/gen_26_06/mr/cuda_memory_resource.hpp
 * @brief RMM 26.06's `rmm::mr::cuda_memory_resource`: device memory from `cudaMalloc`
 * (`hipMalloc`), through librmm's cuda resource.
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
 * @brief Device memory of the current device, allocated and freed synchronously by the
 * runtime. All instances are interchangeable (equal).
 */
class cuda_memory_resource final : public detail::interchangeable_resource<cuda_memory_resource> {
 public:
  /**
   * @brief Creates the resource.
   * @throws rmm::cuda_error when no runtime is usable
   */
  cuda_memory_resource() : interchangeable_resource{rmm_cuda_create} {}

  /// @brief Wraps an existing librmm cuda resource (the registry's initial resource).
  using interchangeable_resource::interchangeable_resource;
};

static_assert(cuda::mr::synchronous_resource<cuda_memory_resource>);
static_assert(cuda::mr::resource_with<cuda_memory_resource, cuda::mr::device_accessible>);

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm

#include <rmm/detail/gen_26_06/mr/detail/known_resources.hpp>

#endif  // RMM_API_GENERATION
