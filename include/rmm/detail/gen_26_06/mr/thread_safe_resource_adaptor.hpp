/**
 * @file detail/gen_26_06/mr/thread_safe_resource_adaptor.hpp
 * @brief RMM 26.06's `rmm::mr::thread_safe_resource_adaptor`: serializes the calls to its upstream
 * with one mutex, through librmm's thread_safe adaptor.
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
#include <mutex>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {
/**
 * @brief Makes any upstream safe to use from several threads: calls to it are serialized. Copies
 * share one adaptor.
 */
class RMM_EXPORT thread_safe_resource_adaptor
  : public detail::shared_adaptor<detail::c_adaptor_impl<rmm_thread_safe_adaptor_create>> {
 public:
  /// @brief RMM's lock type (the mutex itself lives in librmm).
  using lock_t = std::lock_guard<std::mutex>;

  /**
   * @brief Creates the adaptor.
   * @param upstream The upstream
   * @throws rmm::logic_error for an empty upstream
   */
  explicit thread_safe_resource_adaptor(
    cuda::mr::any_resource<cuda::mr::device_accessible> upstream)
    : shared_adaptor{std::in_place, std::move(upstream), "thread_safe_resource_adaptor(upstream)"}
  {
  }
};

static_assert(cuda::mr::resource_with<thread_safe_resource_adaptor, cuda::mr::device_accessible>);

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm

#include <rmm/detail/gen_26_06/mr/detail/known_resources.hpp>

#endif  // RMM_API_GENERATION
