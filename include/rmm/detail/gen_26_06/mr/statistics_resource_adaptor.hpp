/**
 * @file detail/gen_26_06/mr/statistics_resource_adaptor.hpp
 * @brief RMM 26.06's `rmm::mr::statistics_resource_adaptor`: byte and allocation counters
 * (current, peak, total) in a stack of frames, kept by librmm's statistics adaptor.
 */
#pragma once

#include <rmm/detail/export.hpp>

// RMM 26.06 and later only: the header checks compile every header in 25.x units too.
#if RMM_API_GENERATION >= 2606

#include <rmm/detail/error.hpp>
#include <rmm/detail/gen_26_06/mr/detail/resource_bases.hpp>
#include <rmm/mr/detail/statistics_counter.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <shared_mutex>
#include <stdexcept>
#include <utility>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {
namespace detail {

/**
 * @brief The shared state of a statistics_resource_adaptor.
 */
class statistics_resource_adaptor_impl final : public adaptor_impl_base {
 public:
  /// @brief RMM's read lock type (the counters themselves are guarded inside librmm).
  using read_lock_t = std::shared_lock<std::shared_mutex>;
  /// @brief RMM's write lock type.
  using write_lock_t = std::unique_lock<std::shared_mutex>;

  /// @brief One statistic: current value, peak and total of increments.
  using counter = statistics_counter;

  /**
   * @brief Creates the adaptor over @p upstream.
   * @param upstream The upstream
   */
  explicit statistics_resource_adaptor_impl(any_device_resource upstream)
    : adaptor_impl_base{
        std::move(upstream), "statistics_resource_adaptor(upstream)", [](rmm_resource_t up) {
          return make_handle(rmm_statistics_adaptor_create, up);
        }}
  {
  }

  /// @brief The bytes counter of the current frame. @return The counter
  [[nodiscard]] counter get_bytes_counter() const noexcept { return counters().first; }

  /// @brief The allocations counter of the current frame. @return The counter
  [[nodiscard]] counter get_allocations_counter() const noexcept { return counters().second; }

  /**
   * @brief Starts a frame of zeroed counters.
   * @return The (bytes, allocations) counters of the frame below, as they were
   */
  std::pair<counter, counter> push_counters()
  {
    rmm_statistics_counters previous{};
    rmm::detail::check(rmm_statistics_adaptor_push_counters(handle(), &previous));
    return to_counter_pair(previous);
  }

  /**
   * @brief Ends the current frame, folding it into the one below.
   * @return The (bytes, allocations) counters of the ended frame
   * @throws std::out_of_range without a matching push
   */
  std::pair<counter, counter> pop_counters()
  {
    rmm_statistics_counters popped{};
    if (rmm_statistics_adaptor_pop_counters(handle(), &popped) != RMM_STATUS_SUCCESS) {
      throw std::out_of_range("cannot pop the last counter pair: call push_counters() first");
    }
    return to_counter_pair(popped);
  }

 private:
  [[nodiscard]] std::pair<counter, counter> counters() const noexcept
  {
    rmm_statistics_counters c{};
    (void)rmm_statistics_adaptor_get_counters(handle(), &c);
    return to_counter_pair(c);
  }
};

}  // namespace detail

/**
 * @brief Counts the bytes and allocations outstanding through it (current, peak, total), in
 * a stack of frames (push_counters / pop_counters). Copies share the counters.
 */
class RMM_EXPORT statistics_resource_adaptor
  : public detail::shared_adaptor<detail::statistics_resource_adaptor_impl> {
 public:
  /// @brief One statistic: current value, peak and total.
  using counter = detail::statistics_resource_adaptor_impl::counter;
  /// @brief RMM's read lock type.
  using read_lock_t = detail::statistics_resource_adaptor_impl::read_lock_t;
  /// @brief RMM's write lock type.
  using write_lock_t = detail::statistics_resource_adaptor_impl::write_lock_t;

  /// @brief Device-accessible memory.
  friend void get_property(statistics_resource_adaptor const&, cuda::mr::device_accessible) noexcept
  {
  }

  /**
   * @brief Creates the adaptor with zeroed counters.
   * @param upstream The upstream
   * @throws rmm::logic_error for an empty upstream
   */
  explicit statistics_resource_adaptor(cuda::mr::any_resource<cuda::mr::device_accessible> upstream)
    : shared_adaptor{std::in_place, std::move(upstream)}
  {
  }

  /// @brief The bytes counter of the current frame. @return The counter
  [[nodiscard]] counter get_bytes_counter() const noexcept { return get().get_bytes_counter(); }

  /// @brief The allocations counter of the current frame. @return The counter
  [[nodiscard]] counter get_allocations_counter() const noexcept
  {
    return get().get_allocations_counter();
  }

  /// @brief Starts a frame of zeroed counters. @return The frame below's counters
  std::pair<counter, counter> push_counters() { return get().push_counters(); }

  /// @brief Ends the current frame. @return Its counters
  /// @throws std::out_of_range without a matching push
  std::pair<counter, counter> pop_counters() { return get().pop_counters(); }
};

static_assert(cuda::mr::resource_with<statistics_resource_adaptor, cuda::mr::device_accessible>);

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm

#include <rmm/detail/gen_26_06/mr/detail/known_resources.hpp>

#endif  // RMM_API_GENERATION
