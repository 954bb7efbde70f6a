/**
 * @file detail/gen_26_06/mr/tracking_resource_adaptor.hpp
 * @brief RMM 26.06's `rmm::mr::tracking_resource_adaptor`: records every outstanding
 * allocation (size, optionally the stack), kept by librmm's tracking adaptor.
 */
#pragma once

#include <rmm/detail/export.hpp>

// RMM 26.06 and later only: the header checks compile every header in 25.x units too.
#if RMM_API_GENERATION >= 2606

#include <rmm/detail/error.hpp>
#include <rmm/detail/stack_trace.hpp>
#include <rmm/detail/gen_26_06/mr/detail/resource_bases.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {
namespace detail {

/**
 * @brief The shared state of a tracking_resource_adaptor.
 */
class tracking_resource_adaptor_impl final : public adaptor_impl_base {
 public:
  /// @brief RMM's read lock type.
  using read_lock_t = std::shared_lock<std::shared_mutex>;
  /// @brief RMM's write lock type.
  using write_lock_t = std::unique_lock<std::shared_mutex>;

  /// @brief What is known of one outstanding allocation.
  struct allocation_info {
    std::unique_ptr<rmm::detail::stack_trace> strace;  ///< Where it was made, when captured
    std::size_t allocation_size;                       ///< Its size

    allocation_info() = delete;

    /**
     * @brief Describes an allocation of @p size bytes.
     * @param size The size
     * @param capture_stack Whether to capture the calling stack
     */
    allocation_info(std::size_t size, bool capture_stack)
      : strace{capture_stack ? std::make_unique<rmm::detail::stack_trace>() : nullptr},
        allocation_size{size}
    {
    }
  };

  /**
   * @brief Creates the adaptor over @p upstream.
   * @param upstream The upstream
   * @param capture_stacks Whether each allocation records its stack (slow)
   */
  tracking_resource_adaptor_impl(any_device_resource upstream, bool capture_stacks)
    : adaptor_impl_base{std::move(upstream),
                        "tracking_resource_adaptor(upstream, ...)",
                        [&](rmm_resource_t up) {
                          return make_handle(rmm_tracking_adaptor_create, up, capture_stacks);
                        }},
      capture_stacks_{capture_stacks}
  {
  }

  /**
   * @brief The outstanding allocations, read from librmm now. The map stays valid until the
   * next call on this adaptor's object.
   * @return Pointer to allocation info
   */
  [[nodiscard]] std::map<void*, allocation_info> const& get_outstanding_allocations() const noexcept
  {
    std::lock_guard<std::mutex> lock{snapshot_mutex_};
    snapshot_.clear();
    try {
      std::size_t count = 0;
      rmm::detail::check(
        rmm_tracking_adaptor_get_outstanding(handle(), nullptr, nullptr, 0, &count));
      std::vector<void*> ptrs(count);
      std::vector<std::size_t> sizes(count);
      rmm::detail::check(
        rmm_tracking_adaptor_get_outstanding(handle(), ptrs.data(), sizes.data(), count, &count));
      for (std::size_t i = 0; i < ptrs.size() && i < count; ++i) {
        auto it = snapshot_.emplace(ptrs[i], allocation_info{sizes[i], false}).first;
        if (capture_stacks_) {
          std::string text = stack_of(ptrs[i]);
          if (!text.empty()) {
            it->second.strace = std::make_unique<rmm::detail::stack_trace>(text);
          }
        }
      }
    } catch (...) {
      // noexcept, as RMM's: a failure leaves the map with what was read.
    }
    return snapshot_;
  }

  /// @brief Bytes outstanding. @return The bytes
  [[nodiscard]] std::size_t get_allocated_bytes() const noexcept
  {
    std::size_t bytes = 0;
    (void)rmm_tracking_adaptor_get_allocated_bytes(handle(), &bytes);
    return bytes;
  }

  /// @brief The report of outstanding allocations (with stacks when captured). @return It
  [[nodiscard]] std::string get_outstanding_allocations_str() const
  {
    std::size_t needed = 0;
    rmm::detail::check(
      rmm_tracking_adaptor_outstanding_allocations_string(handle(), nullptr, 0, &needed));
    std::string text(needed, '\0');
    rmm::detail::check(rmm_tracking_adaptor_outstanding_allocations_string(
      handle(), text.data(), text.size(), &needed));
    text.resize(needed > 0 ? needed - 1 : 0);
    return text;
  }

  /// @brief Logs the report at debug level.
  void log_outstanding_allocations() const
  {
    rmm::detail::check(rmm_tracking_adaptor_log_outstanding_allocations(handle()));
  }

 private:
  [[nodiscard]] std::string stack_of(void* ptr) const
  {
    std::size_t needed = 0;
    if (rmm_tracking_adaptor_allocation_stack(handle(), ptr, nullptr, 0, &needed) !=
        RMM_STATUS_SUCCESS) {
      return {};
    }
    std::string text(needed, '\0');
    if (rmm_tracking_adaptor_allocation_stack(handle(), ptr, text.data(), text.size(), &needed) !=
        RMM_STATUS_SUCCESS) {
      return {};
    }
    text.resize(needed > 0 ? needed - 1 : 0);
    return text;
  }

  bool capture_stacks_;
  mutable std::mutex snapshot_mutex_;
  mutable std::map<void*, allocation_info> snapshot_;
};

}  // namespace detail

/**
 * @brief Tracks every outstanding allocation of its upstream (size, and the stack with
 * `capture_stacks`): for finding leaks. Copies share the records.
 */
class RMM_EXPORT tracking_resource_adaptor
  : public detail::shared_adaptor<detail::tracking_resource_adaptor_impl> {
 public:
  /// @brief What is known of one outstanding allocation.
  using allocation_info = detail::tracking_resource_adaptor_impl::allocation_info;
  /// @brief RMM's read lock type.
  using read_lock_t = detail::tracking_resource_adaptor_impl::read_lock_t;
  /// @brief RMM's write lock type.
  using write_lock_t = detail::tracking_resource_adaptor_impl::write_lock_t;

  /**
   * @brief Creates the adaptor.
   * @param upstream The upstream
   * @param capture_stacks Whether each allocation records its stack
   * @throws rmm::logic_error for an empty upstream
   */
  tracking_resource_adaptor(cuda::mr::any_resource<cuda::mr::device_accessible> upstream,
                            bool capture_stacks = false)
    : shared_adaptor{std::in_place, std::move(upstream), capture_stacks}
  {
  }

  /// @brief The outstanding allocations. @return Pointer to allocation info
  [[nodiscard]] std::map<void*, allocation_info> const& get_outstanding_allocations() const noexcept
  {
    return get().get_outstanding_allocations();
  }

  /// @brief Bytes outstanding. @return The bytes
  [[nodiscard]] std::size_t get_allocated_bytes() const noexcept
  {
    return get().get_allocated_bytes();
  }

  /// @brief The report of outstanding allocations. @return It
  [[nodiscard]] std::string get_outstanding_allocations_str() const
  {
    return get().get_outstanding_allocations_str();
  }

  /// @brief Logs the report at debug level.
  void log_outstanding_allocations() const { get().log_outstanding_allocations(); }
};

static_assert(cuda::mr::resource_with<tracking_resource_adaptor, cuda::mr::device_accessible>);

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm

#include <rmm/detail/gen_26_06/mr/detail/known_resources.hpp>

#endif  // RMM_API_GENERATION
