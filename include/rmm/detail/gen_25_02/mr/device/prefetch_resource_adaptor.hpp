/**
 * @file detail/gen_25_02/mr/device/prefetch_resource_adaptor.hpp
 * @brief Prefetches each new allocation to the current device on its stream (implemented by the
 * Rust core).
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
#include <rmm/detail/export.hpp>
#include <rmm/prefetch.hpp>

#include <type_traits>
#include <cstddef>
#include <mutex>
#include <shared_mutex>
#include <stack>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {

/**
 * @brief Resource adaptor over @p Upstream.
 *
 * After each allocation, the memory is prefetched to the current device on the allocation's
 * stream. The prefetch is a hint: where the runtime cannot prefetch (memory that is not
 * managed, no prefetch support) the allocation still succeeds without it.
 * The upstream must outlive the adaptor. Not copyable or movable.
 *
 * @tparam Upstream Type of the upstream resource (a device_memory_resource)
 */
template <typename Upstream>
class prefetch_resource_adaptor final : public detail::upstream_resource<Upstream> {
 public:
  /**
   * @brief Creates the adaptor over @p upstream.
   * @param upstream The upstream resource (not owned; must outlive the adaptor)
   * @throws rmm::logic_error when @p upstream is null
   */
  explicit prefetch_resource_adaptor(Upstream* upstream)
    : detail::upstream_resource<Upstream>{upstream, rmm_prefetch_adaptor_create}
  {
  }

  /**
   * @brief Creates the adaptor over @p upstream.
   * @param upstream Reference to the upstream resource (not owned; must outlive the adaptor)
   * @throws rmm::logic_error when @p upstream is null
   */
  explicit prefetch_resource_adaptor(device_async_resource_ref upstream)
    : detail::upstream_resource<Upstream>{upstream, rmm_prefetch_adaptor_create}
  {
  }
};

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm
