/**
 * @file mr/detail/statistics_counter.hpp
 * @brief The counter of every generation's statistics_resource_adaptor (its nested `counter`)
 * and its conversion from the C ABI's counters.
 */
#pragma once

#include <rmm/detail/export.hpp>
#include <rmm/rmm.h>

#include <algorithm>
#include <cstdint>
#include <utility>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {
namespace detail {

/// @brief One statistic: current value, peak and running total of increments.
struct statistics_counter {
  int64_t value{0};  ///< Current value
  int64_t peak{0};   ///< Highest value seen
  int64_t total{0};  ///< Sum of all increments

  /**
   * @brief Adds @p val (value, total and peak).
   * @param val The increment
   * @return *this
   */
  statistics_counter& operator+=(int64_t val)
  {
    value += val;
    total += val;
    peak = std::max(value, peak);
    return *this;
  }

  /**
   * @brief Subtracts @p val from the value.
   * @param val The decrement
   * @return *this
   */
  statistics_counter& operator-=(int64_t val)
  {
    value -= val;
    return *this;
  }

  /**
   * @brief Folds the counter of a nested frame, started at this value, into this one.
   * @param val The nested frame's counter
   */
  void add_counters_from_tracked_sub_block(statistics_counter const& val)
  {
    peak = std::max(value + val.peak, peak);
    value += val.value;
    total += val.total;
  }
};

/**
 * @brief The (bytes, allocations) counters of the C ABI's @p c.
 * @param c The C ABI's counters
 * @return The pair
 */
inline std::pair<statistics_counter, statistics_counter> to_counter_pair(
  rmm_statistics_counters const& c) noexcept
{
  return {statistics_counter{c.bytes.value, c.bytes.peak, c.bytes.total},
          statistics_counter{c.allocations.value, c.allocations.peak, c.allocations.total}};
}

}  // namespace detail
}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm
