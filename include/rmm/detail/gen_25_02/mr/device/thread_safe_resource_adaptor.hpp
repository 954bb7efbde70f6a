/**
 * @file detail/gen_25_02/mr/device/thread_safe_resource_adaptor.hpp
 * @brief Serializes every call to the upstream with one mutex (implemented by the Rust core).
 */
#pragma once

#include <rmm/detail/export.hpp>

#include <rmm/detail/check.hpp>
#include <rmm/detail/gen_25_02/mr/device/detail/handle_resource.hpp>
#include <rmm/detail/gen_25_02/mr/device/detail/upstream_handle.hpp>
#include <rmm/mr/device/device_memory_resource.hpp>
#include <rmm/resource_ref.hpp>
#include <rmm/rmm.h>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/detail/export.hpp>

#include <type_traits>
#include <cstddef>
#include <mutex>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {

/**
 * @brief Resource adaptor over @p Upstream.
 *
 * Every call to the upstream is made under one mutex. Every rmm-rs resource is already
 * thread-safe; this adaptor exists for hipMM compatibility and for user-written upstreams
 * that are not.
 * The upstream must outlive the adaptor. Not copyable or movable.
 *
 * @tparam Upstream Type of the upstream resource (a device_memory_resource)
 */
template <typename Upstream>
class thread_safe_resource_adaptor final : private detail::upstream_handle_holder,
                     public detail::handle_resource {
 public:
  /**
   * @brief Creates the adaptor over @p upstream.
   * @param upstream The upstream resource (not owned; must outlive the adaptor)
   * @throws rmm::logic_error when @p upstream is null
   */
  explicit thread_safe_resource_adaptor(Upstream* upstream)
    : detail::upstream_handle_holder{upstream},
      handle_resource{detail::adopt_handle, create(upstream_handle())},
      upstream_{upstream}
  {
  }

  /**
   * @brief Creates the adaptor over @p upstream.
   * @param upstream Reference to the upstream resource (not owned; must outlive the adaptor)
   * @throws rmm::logic_error when @p upstream is null
   */
  explicit thread_safe_resource_adaptor(device_async_resource_ref upstream)
    : detail::upstream_handle_holder{upstream},
      handle_resource{detail::adopt_handle, create(upstream_handle())},
      upstream_{upstream_ptr<Upstream>()}
  {
  }

  thread_safe_resource_adaptor()                                    = delete;
  thread_safe_resource_adaptor(thread_safe_resource_adaptor const&)            = delete;
  thread_safe_resource_adaptor(thread_safe_resource_adaptor&&)                 = delete;
  thread_safe_resource_adaptor& operator=(thread_safe_resource_adaptor const&) = delete;
  thread_safe_resource_adaptor& operator=(thread_safe_resource_adaptor&&)      = delete;
  ~thread_safe_resource_adaptor() override                          = default;

  /**
   * @brief The upstream resource given at construction.
   * @return The upstream
   */
  [[nodiscard]] rmm::device_async_resource_ref get_upstream_resource() const noexcept
  {
    return upstream_ref();
  }

  /**
   * @brief The upstream resource given at construction (hipMM's older name).
   * @return The upstream
   */
  [[nodiscard]] Upstream* get_upstream() const noexcept { return upstream_; }

 private:
  static rmm_resource_t create(rmm_resource_t upstream)
  {
    rmm_resource_t out = nullptr;
    rmm::detail::check(rmm_thread_safe_adaptor_create(upstream, &out));
    return out;
  }

  Upstream* upstream_;
};

}
RMM_API_NAMESPACE_END
}  // namespace rmm::mr
