/**
 * @file cuda_device.hpp
 * @brief Device identifiers and device queries (RMM's `rmm/cuda_device.hpp`).
 */
#pragma once

#include <rmm/aligned.hpp>
#include <rmm/detail/check.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/detail/export.hpp>
#include <rmm/rmm.h>

#include <cstddef>
#include <utility>

namespace rmm {
RMM_API_NAMESPACE_BEGIN

/**
 * @brief Strong type for a device ordinal.
 */
struct cuda_device_id {
  /// @brief The underlying integer type.
  using value_type = int;

  /**
   * @brief The device current on the calling thread (as RMM 25.02); device 0 when no runtime
   * or device is available.
   */
  cuda_device_id() noexcept
  {
    int device = 0;
    if (rmm_get_current_device(&device) == RMM_STATUS_SUCCESS) { id_ = device; }
  }

  /**
   * @brief Wraps the ordinal @p dev_id.
   * @param dev_id A device ordinal
   */
  explicit constexpr cuda_device_id(value_type dev_id) noexcept : id_{dev_id} {}

  /**
   * @brief The wrapped ordinal.
   * @return The ordinal
   */
  [[nodiscard]] constexpr value_type value() const noexcept { return id_; }

  /// @cond
  friend constexpr bool operator==(cuda_device_id lhs, cuda_device_id rhs) noexcept
  {
    return lhs.value() == rhs.value();
  }
  friend constexpr bool operator!=(cuda_device_id lhs, cuda_device_id rhs) noexcept
  {
    return lhs.value() != rhs.value();
  }
  friend constexpr bool operator<(cuda_device_id lhs, cuda_device_id rhs) noexcept
  {
    return lhs.value() < rhs.value();
  }
  friend constexpr bool operator<=(cuda_device_id lhs, cuda_device_id rhs) noexcept
  {
    return lhs.value() <= rhs.value();
  }
  friend constexpr bool operator>(cuda_device_id lhs, cuda_device_id rhs) noexcept
  {
    return lhs.value() > rhs.value();
  }
  friend constexpr bool operator>=(cuda_device_id lhs, cuda_device_id rhs) noexcept
  {
    return lhs.value() >= rhs.value();
  }
  /// @endcond

 private:
  value_type id_{0};
};

/**
 * @brief The device that is current on the calling thread.
 * @return Its id
 * @throws rmm::cuda_error when the runtime fails
 */
inline cuda_device_id get_current_cuda_device()
{
  int device = 0;
  detail::check(rmm_get_current_device(&device));
  return cuda_device_id{device};
}

/**
 * @brief The number of devices the runtime sees.
 * @return The count
 * @throws rmm::cuda_error when the runtime fails
 */
inline int get_num_cuda_devices()
{
  int count = 0;
  detail::check(rmm_get_device_count(&count));
  return count;
}

/**
 * @brief Free and total memory of the current device.
 * @return {free bytes, total bytes}
 * @throws rmm::cuda_error when the runtime fails
 */
inline std::pair<std::size_t, std::size_t> available_device_memory()
{
  std::size_t free_bytes  = 0;
  std::size_t total_bytes = 0;
  detail::check(rmm_available_device_memory(&free_bytes, &total_bytes));
  return {free_bytes, total_bytes};
}

/**
 * @brief A percentage of the current device's free memory, aligned down to 256 bytes.
 * @param percent Percentage, 0 to 100
 * @return The byte count
 * @throws rmm::logic_error for a percentage outside 0..100
 */
inline std::size_t percent_of_free_device_memory(int percent)
{
  std::size_t bytes = 0;
  detail::check(rmm_percent_of_free_device_memory(percent, &bytes));
  return bytes;
}

/**
 * @brief Makes a device current for the lifetime of this object, then restores the previous one.
 */
struct cuda_set_device_raii {
  /**
   * @brief Makes @p dev_id current (when it is not already).
   * @param dev_id The device to make current
   */
  explicit cuda_set_device_raii(cuda_device_id dev_id)
    : old_device_{get_current_cuda_device()},
      needs_reset_{dev_id.value() >= 0 && old_device_ != dev_id}
  {
    if (needs_reset_) { detail::check(rmm_set_current_device(dev_id.value())); }
  }
  /// @brief Restores the previously current device.
  ~cuda_set_device_raii() noexcept
  {
    if (needs_reset_) { (void)rmm_set_current_device(old_device_.value()); }
  }
  cuda_set_device_raii(cuda_set_device_raii const&)            = delete;
  cuda_set_device_raii& operator=(cuda_set_device_raii const&) = delete;
  cuda_set_device_raii(cuda_set_device_raii&&)                 = delete;
  cuda_set_device_raii& operator=(cuda_set_device_raii&&)      = delete;

 private:
  cuda_device_id old_device_;
  bool needs_reset_;
};

RMM_API_NAMESPACE_END
}  // namespace rmm
