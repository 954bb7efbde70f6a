/**
 * @file detail/gen_25_02/mr/device/tracking_resource_adaptor.hpp
 * @brief Tracks outstanding allocations, optionally with stack traces (implemented by the
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
#include <rmm/detail/error.hpp>
#include <rmm/detail/export.hpp>
#include <rmm/detail/stack_trace.hpp>
#include <rmm/logger.hpp>
#include <rmm/mr/device/per_device_resource.hpp>

#include <cstddef>
#include <map>
#include <utility>
#include <tuple>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>
#include <mutex>
#include <shared_mutex>
#include <sstream>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {

/**
 * @brief Resource adaptor that records every allocation outstanding through it (its size,
 * and with `capture_stacks` the stack trace that made it), to find leaks.
 *
 * As hipMM's, it only observes: freeing a pointer it did not allocate (one allocated through
 * the upstream directly) logs an error and still frees it upstream; freeing with another size
 * logs an error, frees upstream with the size given and corrects the byte count with the
 * recorded size. The upstream must outlive the adaptor. Not copyable or movable.
 *
 * @tparam Upstream Type of the upstream resource (a device_memory_resource)
 */
template <typename Upstream>
class tracking_resource_adaptor final : public detail::upstream_resource<Upstream> {
 public:
  /**
   * @brief What is known about one outstanding allocation.
   *
   * Unlike hipMM (a `std::unique_ptr<stack_trace>`), the stack is a resolved string, empty
   * when stacks are not captured.
   */
  struct allocation_info {
    std::unique_ptr<rmm::detail::stack_trace> strace;  ///< Allocating stack (null unless captured)
    std::size_t allocation_size;                       ///< Bytes requested

    allocation_info() = delete;
    /**
     * @brief Records an allocation of @p size bytes, capturing the current stack if asked.
     * @param size Bytes requested
     * @param capture_stack Whether to capture the stack
     */
    allocation_info(std::size_t size, bool capture_stack)
      : strace{capture_stack ? std::make_unique<rmm::detail::stack_trace>() : nullptr},
        allocation_size{size}
    {
    }
    /**
     * @brief Records an allocation whose stack the Rust core captured as text.
     * @param size Bytes requested
     * @param stack The rendered stack ("" when none was captured)
     */
    allocation_info(std::size_t size, std::string stack)
      : strace{stack.empty() ? nullptr
                             : std::make_unique<rmm::detail::stack_trace>(std::move(stack))},
        allocation_size{size}
    {
    }
  };

  /**
   * @brief Creates the adaptor over @p upstream.
   * @param upstream The upstream resource (not owned; must outlive the adaptor)
   * @param capture_stacks Record the stack trace of each allocation (slow)
   * @throws rmm::logic_error when @p upstream is null
   */
  explicit tracking_resource_adaptor(Upstream* upstream, bool capture_stacks = false)
    : detail::upstream_resource<Upstream>{upstream, rmm_tracking_adaptor_create, capture_stacks}
  {
  }

  /**
   * @brief Creates the adaptor over @p upstream.
   * @param upstream Reference to the upstream resource (not owned; must outlive the adaptor)
   * @param capture_stacks Record the stack trace of each allocation (slow)
   * @throws rmm::logic_error when @p upstream is null
   */
  explicit tracking_resource_adaptor(device_async_resource_ref upstream,
                                     bool capture_stacks = false)
    : detail::upstream_resource<Upstream>{upstream, rmm_tracking_adaptor_create, capture_stacks}
  {
  }

  /**
   * @brief The outstanding allocations, as a map the adaptor keeps and refreshes at each call
   * (RMM returns a reference to its live map; this one is consistent as of the call).
   * @return Pointer → allocation info
   */
  [[nodiscard]] std::map<void*, allocation_info> const& get_outstanding_allocations() const
  {
    std::lock_guard<std::mutex> lock{snapshot_mutex_};
    std::size_t count = 0;
    rmm::detail::check(
      rmm_tracking_adaptor_get_outstanding(this->handle(), nullptr, nullptr, 0, &count));
    std::vector<void*> ptrs(count + 16);
    std::vector<std::size_t> sizes(count + 16);
    rmm::detail::check(rmm_tracking_adaptor_get_outstanding(
      this->handle(), ptrs.data(), sizes.data(), ptrs.size(), &count));
    std::map<void*, allocation_info> out;
    for (std::size_t i = 0; i < count && i < ptrs.size(); ++i) {
      std::string stack;
      std::size_t needed = 0;
      if (rmm_tracking_adaptor_allocation_stack(this->handle(), ptrs[i], nullptr, 0, &needed) ==
            RMM_STATUS_SUCCESS &&
          needed > 1) {
        std::vector<char> buf(needed);
        if (rmm_tracking_adaptor_allocation_stack(
              this->handle(), ptrs[i], buf.data(), buf.size(), nullptr) == RMM_STATUS_SUCCESS) {
          stack = buf.data();
        }
      }
      out.emplace(std::piecewise_construct,
                  std::forward_as_tuple(ptrs[i]),
                  std::forward_as_tuple(sizes[i], std::move(stack)));
    }
    snapshot_ = std::move(out);
    return snapshot_;
  }

  /**
   * @brief Bytes outstanding.
   * @return Bytes
   */
  [[nodiscard]] std::size_t get_allocated_bytes() const
  {
    std::size_t bytes = 0;
    rmm::detail::check(rmm_tracking_adaptor_get_allocated_bytes(this->handle(), &bytes));
    return bytes;
  }

  /**
   * @brief A report of the outstanding allocations, one line each (`0x...: N B`), each
   * followed by its stack when captured.
   * @return The report
   */
  [[nodiscard]] std::string get_outstanding_allocations_str() const
  {
    std::size_t needed = 0;
    rmm::detail::check(
      rmm_tracking_adaptor_outstanding_allocations_string(this->handle(), nullptr, 0, &needed));
    std::vector<char> buf(needed + 4096);
    rmm::detail::check(rmm_tracking_adaptor_outstanding_allocations_string(
      this->handle(), buf.data(), buf.size(), &needed));
    return std::string{buf.data()};
  }

  /**
   * @brief Logs the report at debug level through the library's logger.
   */
  void log_outstanding_allocations() const
  {
    rmm::detail::check(rmm_tracking_adaptor_log_outstanding_allocations(this->handle()));
  }

 private:
  // What get_outstanding_allocations() returns a reference to, as RMM returns its own map.
  mutable std::mutex snapshot_mutex_;
  mutable std::map<void*, allocation_info> snapshot_;
};

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm
