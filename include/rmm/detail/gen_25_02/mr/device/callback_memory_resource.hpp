/**
 * @file detail/gen_25_02/mr/device/callback_memory_resource.hpp
 * @brief Device memory resource whose allocation and deallocation are user callbacks
 * (RMM's `callback_memory_resource`).
 */
#pragma once

#include <rmm/detail/export.hpp>
#include <rmm/mr/detail/callback_types.hpp>

#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/check.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/detail/export.hpp>
#include <rmm/detail/gen_25_02/mr/device/detail/handle_resource.hpp>
#include <rmm/detail/gen_25_02/mr/device/detail/resource_bridge.hpp>
#include <rmm/mr/device/device_memory_resource.hpp>
#include <rmm/rmm.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {

namespace detail {
/// @brief What the Rust callback resource carries as context; deleted by its destroy entry.
struct callback_context {
  allocate_callback_t allocate;      ///< @brief allocation callback
  deallocate_callback_t deallocate;  ///< @brief deallocation callback
  void* allocate_arg;                ///< @brief argument of the allocation callback
  void* deallocate_arg;              ///< @brief argument of the deallocation callback
};

/// @brief Vtable allocate entry of callback_memory_resource.
/// @param ctx callback_context
/// @param bytes size
/// @param stream stream
/// @param out receives the pointer
/// @return status
inline vtable_status_t callback_allocate(void* ctx,
                                         std::size_t bytes,
                                         rmm_stream_t stream,
                                         void** out) noexcept
{
  auto* context = static_cast<callback_context*>(ctx);
  return static_cast<vtable_status_t>(translate_exceptions(
    [&] {
      void* ptr = context->allocate(
        bytes, cuda_stream_view{rmm::detail::from_c_stream(stream)}, context->allocate_arg);
      if (ptr == nullptr && bytes != 0) {
        throw rmm::bad_alloc{"allocate callback returned null for " + std::to_string(bytes) +
                             " bytes"};
      }
      *out = ptr;
    },
    unknown_exception));
}

/// @brief Vtable deallocate entry of callback_memory_resource.
/// @param ctx callback_context
/// @param ptr pointer
/// @param bytes size
/// @param stream stream
/// @return status
inline vtable_status_t callback_deallocate(void* ctx,
                                           void* ptr,
                                           std::size_t bytes,
                                           rmm_stream_t stream) noexcept
{
  auto* context = static_cast<callback_context*>(ctx);
  return static_cast<vtable_status_t>(translate_exceptions(
    [&] {
      context->deallocate(
        ptr, bytes, cuda_stream_view{rmm::detail::from_c_stream(stream)}, context->deallocate_arg);
    },
    unknown_exception));
}

/// @brief Vtable destroy entry of callback_memory_resource.
/// @param ctx callback_context to delete
inline void callback_destroy(void* ctx) noexcept { delete static_cast<callback_context*>(ctx); }

/// @brief Creates the Rust callback resource owning a context made of the callbacks.
/// @param allocate allocation callback
/// @param deallocate deallocation callback
/// @param allocate_arg its argument
/// @param deallocate_arg its argument
/// @return A handle owning one reference
inline rmm_resource_t make_callback_handle(allocate_callback_t allocate,
                                           deallocate_callback_t deallocate,
                                           void* allocate_arg,
                                           void* deallocate_arg)
{
  RMM_EXPECTS(static_cast<bool>(allocate), "allocate callback must not be empty");
  RMM_EXPECTS(static_cast<bool>(deallocate), "deallocate callback must not be empty");
  auto context = std::make_unique<callback_context>(
    callback_context{std::move(allocate), std::move(deallocate), allocate_arg, deallocate_arg});
  rmm_callback_vtable vtable{};
  vtable.allocate       = &callback_allocate;
  vtable.deallocate     = &callback_deallocate;
  vtable.destroy        = &callback_destroy;
  rmm_resource_t handle = nullptr;
  // From here the Rust resource owns the context (callback_destroy frees it, also when the
  // creation fails after checking the vtable), so ownership is given up before the call.
  rmm::detail::check(rmm_callback_create_with_vtable(&vtable, context.release(), &handle));
  return handle;
}
}  // namespace detail

/**
 * @brief Device memory resource that allocates and frees through user callbacks.
 *
 * The callbacks and their arguments are kept by the Rust core with the resource, so a copy
 * of the handle (for example in the per-device registry) stays valid after this object is
 * destroyed, as long as the arguments themselves are.
 *
 * allocate()/deallocate() on this object call the callbacks directly, as RMM does: the
 * allocation callback's result is returned as is (a nullptr is not turned into an exception)
 * and exceptions thrown by a callback reach the caller unchanged.
 */
class callback_memory_resource final : public detail::handle_resource {
 public:
  /**
   * @brief Creates the resource.
   * @param allocate_callback Called to allocate
   * @param deallocate_callback Called to deallocate
   * @param allocate_callback_arg Passed as last argument of @p allocate_callback
   * @param deallocate_callback_arg Passed as last argument of @p deallocate_callback
   * @throws rmm::logic_error when a callback is empty
   */
  callback_memory_resource(allocate_callback_t allocate_callback,
                           deallocate_callback_t deallocate_callback,
                           void* allocate_callback_arg   = nullptr,
                           void* deallocate_callback_arg = nullptr)
    : handle_resource{detail::adopt_handle,
                      detail::make_callback_handle(std::move(allocate_callback),
                                                   std::move(deallocate_callback),
                                                   allocate_callback_arg,
                                                   deallocate_callback_arg)},
      context_{context_of(handle())}
  {
  }

 private:
  static detail::callback_context* context_of(rmm_resource_t handle)
  {
    void* ctx = nullptr;
    rmm::detail::check(rmm_callback_get_context(handle, &ctx));
    return static_cast<detail::callback_context*>(ctx);
  }

  void* do_allocate(std::size_t bytes, cuda_stream_view stream) override
  {
    return context_->allocate(bytes, stream, context_->allocate_arg);
  }

  void do_deallocate(void* ptr, std::size_t bytes, cuda_stream_view stream) override
  {
    context_->deallocate(ptr, bytes, stream, context_->deallocate_arg);
  }

  // Owned by the Rust resource, which lives at least as long as the handle this object holds.
  detail::callback_context* context_;
};

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm
