/**
 * @file detail/gen_25_02/mr/device/statistics_resource_adaptor.hpp
 * @brief Counts bytes and allocations through an upstream (implemented by the Rust core).
 */
#pragma once

#include <rmm/detail/export.hpp>
#include <rmm/mr/detail/statistics_counter.hpp>

#include <rmm/detail/check.hpp>
#include <rmm/detail/gen_25_02/mr/device/detail/handle_resource.hpp>
#include <rmm/detail/gen_25_02/mr/device/detail/upstream_handle.hpp>
#include <rmm/detail/gen_25_02/mr/device/detail/upstream_resource.hpp>
#include <rmm/mr/device/device_memory_resource.hpp>
#include <rmm/resource_ref.hpp>
#include <rmm/rmm.h>
#include <rmm/detail/export.hpp>
#include <rmm/mr/device/per_device_resource.hpp>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <cstddef>
#include <mutex>
#include <shared_mutex>
#include <stack>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {

/**
 * @brief Resource adaptor counting the bytes and the allocations served by @p Upstream:
 * current value, peak and total of each, exact under concurrency.
 *
 * `push_counters()` starts a nested frame of zeroed counters; `pop_counters()` ends it and
 * folds it into the frame below. The upstream must outlive the adaptor. Not copyable or
 * movable.
 *
 * @tparam Upstream Type of the upstream resource (a device_memory_resource)
 */
template <typename Upstream>
class statistics_resource_adaptor final : public detail::upstream_resource<Upstream> {
 public:
  /// @brief One statistic: current value, peak and running total.
  using counter = detail::statistics_counter;

  /**
   * @brief Creates the adaptor over @p upstream, with zeroed counters.
   * @param upstream The upstream resource (not owned; must outlive the adaptor)
   * @throws rmm::logic_error when @p upstream is null
   */
  explicit statistics_resource_adaptor(Upstream* upstream)
    : detail::upstream_resource<Upstream>{upstream, rmm_statistics_adaptor_create}
  {
  }

  /**
   * @brief Creates the adaptor over @p upstream, with zeroed counters.
   * @param upstream Reference to the upstream resource (not owned; must outlive the adaptor)
   * @throws rmm::logic_error when @p upstream is null
   */
  explicit statistics_resource_adaptor(device_async_resource_ref upstream)
    : detail::upstream_resource<Upstream>{upstream, rmm_statistics_adaptor_create}
  {
  }

  /**
   * @brief The byte counter of the current frame.
   * @return The counter
   */
  [[nodiscard]] counter get_bytes_counter() const { return counters().first; }

  /**
   * @brief The allocation-count counter of the current frame.
   * @return The counter
   */
  [[nodiscard]] counter get_allocations_counter() const { return counters().second; }

  /**
   * @brief Starts a new frame of zeroed counters.
   * @return The (bytes, allocations) counters of the frame below, as they were
   */
  std::pair<counter, counter> push_counters()
  {
    rmm_statistics_counters c{};
    rmm::detail::check(rmm_statistics_adaptor_push_counters(this->handle(), &c));
    return detail::to_counter_pair(c);
  }

  /**
   * @brief Ends the current frame and folds it into the frame below.
   * @return The (bytes, allocations) counters of the frame ended
   * @throws std::out_of_range (as hipMM) when there was no matching push_counters()
   */
  std::pair<counter, counter> pop_counters()
  {
    rmm_statistics_counters c{};
    auto const status = rmm_statistics_adaptor_pop_counters(this->handle(), &c);
    if (status == RMM_STATUS_INVALID_ARGUMENT) {
      throw std::out_of_range{rmm::detail::status_message(status)};
    }
    rmm::detail::check(status);
    return detail::to_counter_pair(c);
  }

 private:
  [[nodiscard]] std::pair<counter, counter> counters() const
  {
    rmm_statistics_counters c{};
    rmm::detail::check(rmm_statistics_adaptor_get_counters(this->handle(), &c));
    return detail::to_counter_pair(c);
  }
};

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm
