/**
 * @file detail/gen_25_02/mr/device/failure_callback_resource_adaptor.hpp
 * @brief Calls a callback on out-of-memory and retries while it says so (implemented by the
 * Rust core).
 */
#pragma once

#include <rmm/detail/export.hpp>

#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/check.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/error.hpp>
#include <rmm/detail/gen_25_02/mr/device/detail/handle_resource.hpp>
#include <rmm/detail/gen_25_02/mr/device/detail/upstream_handle.hpp>
#include <rmm/detail/gen_25_02/mr/device/detail/upstream_resource.hpp>
#include <rmm/mr/device/device_memory_resource.hpp>
#include <rmm/resource_ref.hpp>
#include <rmm/rmm.h>
#include <rmm/detail/export.hpp>
#include <rmm/mr/device/per_device_resource.hpp>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {

/**
 * @brief The callback: called with the requested size and the user argument after an
 * allocation failed; returns true to retry, false to let the failure through.
 */
using failure_callback_t = std::function<bool(std::size_t, void*)>;

/**
 * @brief Resource adaptor that, when an allocation fails with an @p ExceptionType, calls the
 * callback and retries the allocation for as long as it returns true, then rethrows the last
 * failure.
 *
 * The failures caught follow @p ExceptionType as a C++ catch clause would: rmm::out_of_memory
 * (the default) catches out-of-memory only; rmm::bad_alloc, std::bad_alloc (or a base of
 * them) also catch the other allocation failures (`RMM_STATUS_BAD_ALLOC`, e.g. an upstream
 * throwing rmm::bad_alloc). Other failures pass through without a call. A callback that
 * throws ends the retries: its exception propagates unchanged to the caller of allocate().
 * The upstream must outlive the adaptor. Not copyable or movable.
 *
 * @tparam Upstream Type of the upstream resource (a device_memory_resource)
 * @tparam ExceptionType The failure that triggers the callback
 */
template <typename Upstream, typename ExceptionType = rmm::out_of_memory>
class failure_callback_resource_adaptor final : public detail::upstream_resource<Upstream> {
 public:
  /// @brief The exception type of hipMM's template parameter.
  using exception_type = ExceptionType;

  /// @brief The creation flags matching ExceptionType: whether a catch of it takes bad_alloc.
  static constexpr std::uint32_t retry_flags =
    std::is_base_of_v<ExceptionType, rmm::bad_alloc> ? RMM_FAILURE_CALLBACK_RETRY_BAD_ALLOC : 0U;

  /**
   * @brief Creates the adaptor over @p upstream.
   * @param upstream The upstream resource (not owned; must outlive the adaptor)
   * @param callback Called on out-of-memory; must not be empty
   * @param callback_arg Passed to @p callback untouched
   * @throws rmm::logic_error when @p upstream is null or @p callback is empty
   */
  failure_callback_resource_adaptor(Upstream* upstream,
                                    failure_callback_t callback,
                                    void* callback_arg)
    : detail::upstream_resource<Upstream>{upstream, &create, this, static_cast<bool>(callback)},
      callback_{std::move(callback)},
      callback_arg_{callback_arg}
  {
  }

  /**
   * @brief Creates the adaptor over @p upstream.
   * @param upstream Reference to the upstream resource (not owned; must outlive the adaptor)
   * @param callback Called on out-of-memory; must not be empty
   * @param callback_arg Passed to @p callback untouched
   * @throws rmm::logic_error when @p upstream is null or @p callback is empty
   */
  failure_callback_resource_adaptor(device_async_resource_ref upstream,
                                    failure_callback_t callback,
                                    void* callback_arg)
    : detail::upstream_resource<Upstream>{upstream, &create, this, static_cast<bool>(callback)},
      callback_{std::move(callback)},
      callback_arg_{callback_arg}
  {
  }

 private:
  // The handle calls back into this object only when an allocation fails, once it is built.
  static rmm_status_t create(rmm_resource_t upstream,
                             failure_callback_resource_adaptor* self,
                             bool has_callback,
                             rmm_resource_t* out)
  {
    RMM_EXPECTS(has_callback, "failure callback must not be empty");
    return rmm_failure_callback_adaptor_create_ex(upstream, &trampoline, self, retry_flags, out);
  }

  /// Called from the Rust core; never lets an exception through the C ABI: it is kept for
  /// the allocating thread and rethrown by do_allocate.
  static bool trampoline(std::size_t bytes, void* arg) noexcept
  {
    auto* self = static_cast<failure_callback_resource_adaptor*>(arg);
    try {
      return self->callback_(bytes, self->callback_arg_);
    } catch (...) {
      std::lock_guard<std::mutex> lock{self->mutex_};
      self->pending_[std::this_thread::get_id()] = std::current_exception();
      return false;
    }
  }

  void* do_allocate(std::size_t bytes, cuda_stream_view stream) override
  {
    void* ptr = nullptr;
    auto const status =
      rmm_allocate_async(this->handle(), bytes, rmm::detail::to_c_stream(stream.value()), &ptr);
    if (status != RMM_STATUS_SUCCESS) {
      std::exception_ptr thrown;
      {
        std::lock_guard<std::mutex> lock{mutex_};
        auto it = pending_.find(std::this_thread::get_id());
        if (it != pending_.end()) {
          thrown = it->second;
          pending_.erase(it);
        }
      }
      if (thrown) { std::rethrow_exception(thrown); }
      rmm::detail::check(status);
    }
    return ptr;
  }

  void do_deallocate(void* ptr, std::size_t bytes, cuda_stream_view stream) override
  {
    rmm::detail::check(
      rmm_deallocate_async(this->handle(), ptr, bytes, rmm::detail::to_c_stream(stream.value())));
  }

  failure_callback_t callback_;
  void* callback_arg_;
  std::mutex mutex_;
  std::map<std::thread::id, std::exception_ptr> pending_;
};

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm
