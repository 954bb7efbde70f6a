/**
 * @file detail/gen_26_06/mr/prefetch_resource_adaptor.hpp
 * @brief RMM 26.06's `rmm::mr::prefetch_resource_adaptor`: prefetches each new allocation to the
 * current device, through librmm's prefetch adaptor.
 */
#pragma once

#include <rmm/detail/export.hpp>

// RMM 26.06 and later only: the header checks compile every header in 25.x units too.
#if RMM_API_GENERATION >= 2606

#include <rmm/aligned.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/detail/gen_26_06/mr/detail/resource_bases.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>

#include <cstddef>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {
/**
 * @brief Prefetches each allocation of its upstream (managed memory) to the current device on the
 * allocation's stream. Copies share one adaptor.
 */
class RMM_EXPORT prefetch_resource_adaptor
  : public detail::shared_adaptor<detail::c_adaptor_impl<rmm_prefetch_adaptor_create>> {
 public:
  /**
   * @brief Creates the adaptor.
   * @param upstream The upstream
   * @throws rmm::logic_error for an empty upstream
   */
  explicit prefetch_resource_adaptor(cuda::mr::any_resource<cuda::mr::device_accessible> upstream)
    : shared_adaptor{std::in_place, std::move(upstream), "prefetch_resource_adaptor(upstream)"}
  {
  }
};

static_assert(cuda::mr::resource_with<prefetch_resource_adaptor, cuda::mr::device_accessible>);

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm

#include <rmm/detail/gen_26_06/mr/detail/known_resources.hpp>

#endif  // RMM_API_GENERATION
