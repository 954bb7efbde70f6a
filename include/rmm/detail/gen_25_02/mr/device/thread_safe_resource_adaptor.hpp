/**
 * @file detail/gen_25_02/mr/device/thread_safe_resource_adaptor.hpp
 * @brief Serializes every call to the upstream with one mutex (implemented by the Rust core).
 */
#pragma once

#include <rmm/detail/export.hpp>

#include <rmm/detail/check.hpp>
#include <rmm/detail/gen_25_02/mr/device/detail/handle_resource.hpp>
#include <rmm/detail/gen_25_02/mr/device/detail/upstream_handle.hpp>
#include <rmm/detail/gen_25_02/mr/device/detail/upstream_resource.hpp>
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
class thread_safe_resource_adaptor final : public detail::upstream_resource<Upstream> {
 public:
  /**
   * @brief Creates the adaptor over @p upstream.
   * @param upstream The upstream resource (not owned; must outlive the adaptor)
   * @throws rmm::logic_error when @p upstream is null
   */
  explicit thread_safe_resource_adaptor(Upstream* upstream)
    : detail::upstream_resource<Upstream>{upstream, rmm_thread_safe_adaptor_create}
  {
  }

  /**
   * @brief Creates the adaptor over @p upstream.
   * @param upstream Reference to the upstream resource (not owned; must outlive the adaptor)
   * @throws rmm::logic_error when @p upstream is null
   */
  explicit thread_safe_resource_adaptor(device_async_resource_ref upstream)
    : detail::upstream_resource<Upstream>{upstream, rmm_thread_safe_adaptor_create}
  {
  }
};

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm
